import type { EventBody, RecordedEvent } from '../../events/event-types.js';
import type { BudgetMeasure } from '../../events/event-fields.js';
import { describeLimit } from '../../events/budget-figures.js';

/** The run's limits as the user set them; null for no limit. */
export interface RunLimits {
  /** Input plus output tokens of every model call of the run. */
  readonly tokens: number | null;
  readonly usd: number | null;
  /** Wall-clock hours from the run's start. */
  readonly maxHours: number | null;
}

/** A warning is due when a scope has spent this share of a limit. */
export const WARN_AT = 0.8;

/** A delegated subtree may spend at most this share of what its parent has left when it is delegated. */
export const SUBTREE_SHARE = 0.5;

/** A limit that was used up, and the figures at that moment. */
export interface Exhaustion {
  readonly taskId: string;
  readonly scope: 'run' | 'subtree';
  readonly measure: BudgetMeasure;
  readonly limit: number;
  readonly spent: number;
  /** Said to agents and people: "the run's token budget of 100,000 tokens was used up". */
  readonly what: string;
}

/** What an agent may do before its next model call. */
export type CallPermit =
  | { readonly kind: 'go' }
  /** Its scope's budget is used up: this is its one last call, to hand off. */
  | { readonly kind: 'final'; readonly exhaustion: Exhaustion }
  /** It had its last call, or its call in flight when the budget was used up landed past the limit: it stops without another. */
  | { readonly kind: 'stop'; readonly exhaustion: Exhaustion };

/** A reminder for a planner: a scope it owns spent 80% of a limit. */
export interface BudgetWarning {
  readonly scope: 'run' | 'subtree';
  readonly scopePath: string | null;
  readonly measure: BudgetMeasure;
  readonly spent: number;
  readonly limit: number;
}

/**
 * The run's budget: its limits, and what every model call spent, folded from the run's events
 * per agent and per scope. A scope is the run (the root planner's task) or a delegated subtree
 * (a sub-planner's task and everything below it); a call's spend counts against its agent's
 * scope and every scope above it. One per run, fed every event as it is recorded.
 */
export interface BudgetLedger {
  /** Folds one event of the run: tasks, agents starting and ending, model calls' usage. */
  observe(event: RecordedEvent): void;
  /** Asked by an agent before each model call; `taskId` is the task the agent runs. */
  permitCall(taskId: string): CallPermit;
  /** Null when a new agent may start on the task; else the limit that keeps it from starting. */
  blocksStart(taskId: string): Exhaustion | null;
  /** Warnings for the planner of `taskId` not told yet, each returned once. */
  takeWarnings(taskId: string): BudgetWarning[];
  /** Looks at the clock: a time limit runs out even while no agent calls the model. */
  tick(): void;
  /** The run's own limit that was used up first, or null while none was. */
  runExhaustion(): Exhaustion | null;
}

export interface BudgetLedgerOptions {
  readonly limits: RunLimits;
  /** When the run started: the clock's limit counts from here. */
  readonly startedAt: number;
  readonly now: () => number;
  /** Where the ledger records `budget.*` events (the run's system recorder). */
  readonly record: (body: EventBody) => void;
}

type Spend = Record<'tokens' | 'usd', number>;

interface Scope {
  readonly taskId: string;
  readonly kind: 'run' | 'subtree';
  readonly path: string | null;
  readonly limits: Readonly<Record<BudgetMeasure, number | null>>;
  readonly spent: Spend;
  readonly warned: Set<BudgetMeasure>;
  readonly exhausted: Map<BudgetMeasure, Exhaustion>;
}

interface TaskNode {
  readonly parentTaskId: string | null;
  /** Set for planner tasks: the scope the task owns. */
  readonly scope: Scope | null;
}

/** An agent that started and has not ended. */
interface AgentSpend {
  readonly taskId: string;
  /**
   * It may make no more calls: its last call was granted, or its call in flight when a limit of
   * its scopes was used up landed past that limit and so was its last.
   */
  finalCallTaken: boolean;
  /** Granted a call whose answer has not landed: from a permit until its `model.responded` or its next ask. */
  callInFlight: boolean;
  /** The spend limits that were used up while its current call was in flight. */
  readonly caughtInFlight: { readonly scope: Scope; readonly measure: 'tokens' | 'usd' }[];
  /** Its largest single call so far, per measure: what is held back for its last call. */
  readonly largest: Spend;
}

const HOUR_MS = 3_600_000;

export function createBudgetLedger(options: BudgetLedgerOptions): BudgetLedger {
  const { limits, startedAt, now, record } = options;
  const tasks = new Map<string, TaskNode>();
  const agents = new Map<string, AgentSpend>();
  const agentOfTask = new Map<string, string>();
  /** Every agent's task, kept after it ends, for an agent taken up again after a restart. */
  const taskOfAgent = new Map<string, string>();
  const warnings = new Map<string, BudgetWarning[]>();
  let root: Scope | null = null;

  const newScope = (taskId: string, kind: Scope['kind'], path: string | null, scopeLimits: Scope['limits']): Scope => ({
    taskId,
    kind,
    path,
    limits: scopeLimits,
    spent: { tokens: 0, usd: 0 },
    warned: new Set(),
    exhausted: new Map(),
  });

  /** The scopes a task's agent spends against, nearest first, the run last. */
  const scopesOf = (taskId: string): Scope[] => {
    const chain: Scope[] = [];
    for (let node = tasks.get(taskId); node !== undefined; node = node.parentTaskId === null ? undefined : tasks.get(node.parentTaskId)) {
      if (node.scope !== null) chain.push(node.scope);
    }
    return chain;
  };

  const spentOn = (scope: Scope, measure: BudgetMeasure): number =>
    measure === 'time' ? Math.max(0, now() - startedAt) : scope.spent[measure];

  /** One call's worth for each agent running in the scope: what their last calls may take. */
  const reserveOf = (scope: Scope, measure: BudgetMeasure): { reserved: number; agents: number } => {
    let reserved = 0;
    let count = 0;
    for (const agent of agents.values()) {
      if (!scopesOf(agent.taskId).includes(scope)) continue;
      count += 1;
      if (measure !== 'time') reserved += agent.largest[measure];
    }
    return { reserved, agents: count };
  };

  const evaluate = (scope: Scope): void => {
    for (const measure of ['tokens', 'usd', 'time'] as const) {
      const limit = scope.limits[measure];
      if (limit === null || scope.exhausted.has(measure)) continue;
      const spent = spentOn(scope, measure);
      const { reserved, agents: running } = reserveOf(scope, measure);
      const exhausted = spent + reserved >= limit;
      if (!scope.warned.has(measure) && (spent >= WARN_AT * limit || exhausted)) {
        scope.warned.add(measure);
        const warning: BudgetWarning = { scope: scope.kind, scopePath: scope.path, measure, spent, limit };
        warnings.set(scope.taskId, [...(warnings.get(scope.taskId) ?? []), warning]);
        record({ type: 'budget.warned', data: { taskId: scope.taskId, scope: scope.kind, measure, spent, limit } });
      }
      if (!exhausted) continue;
      const exhaustion: Exhaustion = {
        taskId: scope.taskId,
        scope: scope.kind,
        measure,
        limit,
        spent,
        what: describeLimit(scope.kind, scope.path, measure, limit),
      };
      scope.exhausted.set(measure, exhaustion);
      if (measure !== 'time') catchCallsInFlight(scope, measure);
      record({ type: 'budget.exhausted', data: { taskId: scope.taskId, scope: scope.kind, measure, spent, limit, reserved, agents: running } });
    }
  };

  /**
   * The calls in flight when a spend limit is used up are judged when they land (`charge`).
   * What was held back for them may have been too little (nothing at all before an agent's
   * first answer), and a final call after each would pass the limit by two calls per agent.
   */
  const catchCallsInFlight = (scope: Scope, measure: 'tokens' | 'usd'): void => {
    for (const agent of agents.values()) {
      if (agent.callInFlight && scopesOf(agent.taskId).includes(scope)) agent.caughtInFlight.push({ scope, measure });
    }
  };

  /** The used-up limit that governs a task: the outermost exhausted scope's first, or null. */
  const exhaustionOf = (taskId: string): Exhaustion | null => {
    const chain = scopesOf(taskId);
    for (const scope of chain) evaluate(scope);
    for (const scope of chain.reverse()) {
      const first = scope.exhausted.values().next();
      if (first.done !== true) return first.value;
    }
    return null;
  };

  const addTask = (taskId: string, parentTaskId: string | null, kind: 'worker' | 'planner', path: string | null): void => {
    if (kind === 'worker') {
      tasks.set(taskId, { parentTaskId, scope: null });
      return;
    }
    if (parentTaskId === null) {
      const time = limits.maxHours === null ? null : limits.maxHours * HOUR_MS;
      root = newScope(taskId, 'run', null, { tokens: limits.tokens, usd: limits.usd, time });
      tasks.set(taskId, { parentTaskId, scope: root });
      return;
    }
    const parent = scopesOf(parentTaskId)[0];
    const share = (measure: 'tokens' | 'usd'): number | null => {
      const limit = parent?.limits[measure] ?? null;
      if (parent === undefined || limit === null) return null;
      const left = Math.max(0, limit - parent.spent[measure]) * SUBTREE_SHARE;
      return measure === 'tokens' ? Math.floor(left) : left;
    };
    const scope = newScope(taskId, 'subtree', path, { tokens: share('tokens'), usd: share('usd'), time: null });
    tasks.set(taskId, { parentTaskId, scope });
    if (scope.limits.tokens !== null || scope.limits.usd !== null) {
      record({ type: 'budget.allotted', data: { taskId, parentTaskId, tokens: scope.limits.tokens, usd: scope.limits.usd } });
    }
  };

  const charge = (agentId: string, tokens: number, usd: number): void => {
    const agent = agents.get(agentId);
    if (agent === undefined) return;
    agent.largest.tokens = Math.max(agent.largest.tokens, tokens);
    agent.largest.usd = Math.max(agent.largest.usd, usd);
    const chain = scopesOf(agent.taskId);
    for (const scope of chain) {
      scope.spent.tokens += tokens;
      scope.spent.usd += usd;
    }
    // This answer was in flight until now, so it is judged like every call caught in flight.
    for (const scope of chain) evaluate(scope);
    // A call caught in flight that lands within the limit fit in what was left: its agent keeps
    // its last call. One that lands past the limit was its agent's one call past it: no more.
    // So the spend ends within the limit plus one call per agent, in every order of events.
    if (agent.caughtInFlight.some(({ scope, measure }) => scope.spent[measure] > (scope.limits[measure] ?? Infinity))) agent.finalCallTaken = true;
    agent.caughtInFlight.length = 0;
    agent.callInFlight = false;
  };

  return {
    observe(event) {
      switch (event.type) {
        case 'task.created':
          addTask(event.data.taskId, event.data.parentTaskId, event.data.kind, event.data.scope);
          return;
        case 'agent.started':
          taskOfAgent.set(event.agentId, event.data.taskId);
          agents.set(event.agentId, { taskId: event.data.taskId, finalCallTaken: false, callInFlight: false, caughtInFlight: [], largest: { tokens: 0, usd: 0 } });
          agentOfTask.set(event.data.taskId, event.agentId);
          return;
        case 'agent.restored': {
          // Taken up again after a restart: it spends against its task's scopes as before.
          const taskId = taskOfAgent.get(event.agentId);
          if (taskId === undefined) return;
          agents.set(event.agentId, { taskId, finalCallTaken: false, callInFlight: false, caughtInFlight: [], largest: { tokens: 0, usd: 0 } });
          agentOfTask.set(taskId, event.agentId);
          return;
        }
        case 'agent.ended': {
          // An ended agent makes no more calls and holds nothing back; a long run forgets it.
          const agent = agents.get(event.agentId);
          agents.delete(event.agentId);
          if (agent !== undefined && agentOfTask.get(agent.taskId) === event.agentId) agentOfTask.delete(agent.taskId);
          return;
        }
        case 'model.responded':
        case 'context.compacted': {
          // A summary near the context window is a model call too, spent like any other.
          const { usage, costUsd } = event.data;
          charge(event.agentId, usage.inputTokens + usage.outputTokens, costUsd ?? 0);
          return;
        }
        default:
          return;
      }
    },
    permitCall(taskId) {
      const agent = agents.get(agentOfTask.get(taskId) ?? '');
      // An agent that asks has no call in flight, even if its last one failed without an answer.
      if (agent !== undefined) {
        agent.callInFlight = false;
        agent.caughtInFlight.length = 0;
      }
      const exhaustion = exhaustionOf(taskId);
      if (exhaustion === null) {
        if (agent !== undefined) agent.callInFlight = true;
        return { kind: 'go' };
      }
      if (agent === undefined || agent.finalCallTaken) return { kind: 'stop', exhaustion };
      agent.finalCallTaken = true;
      agent.callInFlight = true;
      return { kind: 'final', exhaustion };
    },
    blocksStart: exhaustionOf,
    takeWarnings(taskId) {
      const due = warnings.get(taskId) ?? [];
      warnings.delete(taskId);
      return due;
    },
    tick() {
      if (root !== null) evaluate(root);
    },
    runExhaustion() {
      if (root === null) return null;
      const first = root.exhausted.values().next();
      return first.done === true ? null : first.value;
    },
  };
}
