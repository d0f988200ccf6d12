import type { ColonyEvent, EventData } from '../../events/event-types.js';
import type { AgentRole } from '../../events/event-fields.js';
import { handoffStatusSchema, isFalseClaim } from '../../events/handoff.js';
import { createGreenHealthFold } from '../green-health.js';
import { countTasks, countVerdicts, greenStatusOf } from './status-parts.js';
import { createHostFold } from './host-fold.js';
import type { AgentState, AgentStatus, BudgetEvent, RunStatus, RunStatusContext, SalvagedWorkStatus, SandboxStatus, SetupStatus, TrunkRewriteStatus, UserAndon } from './types.js';

export interface RunStatusFoldOptions {
  /** Fold only this run. Without it the fold follows the run started last, starting over at each `run.started`. */
  readonly runId?: string;
}

/**
 * The run status built up one event at a time, so a live view can feed events as they arrive
 * and ask for a snapshot whenever it redraws.
 */
export interface RunStatusFold {
  /** Events of other runs, and events at or below a seq already folded, change nothing. */
  add(event: ColonyEvent): void;
  /** The run being folded; null until one started (when no run id was given). */
  readonly runId: string | null;
  /** The status now, as fresh plain data; null until the run's `run.started` was folded. */
  snapshot(context: RunStatusContext): RunStatus | null;
}

interface RunRecord {
  mode: string;
  repo: string;
  model: string;
  title: string;
  trunk?: { branch: string; checkedOut: string } | undefined;
  startedAt: number;
  ended: { status: string; at: number; durationMs: number } | null;
  resumes: number;
}

interface BudgetRecord {
  tokens: number | null;
  usd: number | null;
  timeMs: number | null;
  warned: BudgetEvent[];
  exhausted: BudgetEvent[];
}

interface AgentRecord {
  id: string;
  role: AgentRole;
  parentId: string | null;
  state: AgentState;
  taskId: string;
  title: string;
  steps: number;
  tokens: number;
  costUsd: number;
  startedAt: number;
  endedAt: number | null;
  reason: string | null;
  summary: string | null;
  scratchpad: string | null;
  compactions: number;
  host: string | null;
}

interface Totals {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
  costKnown: boolean;
  modelCalls: number;
  toolCalls: number;
  commitsLanded: number;
  compactions: number;
  compactionTokens: number;
  lastEventAt: number;
}

function emptyTotals(): Totals {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    costUsd: 0,
    costKnown: true,
    modelCalls: 0,
    toolCalls: 0,
    commitsLanded: 0,
    compactions: 0,
    compactionTokens: 0,
    lastEventAt: 0,
  };
}

const NO_SETUP: SetupStatus = { state: 'skipped', command: null, registry: null, startedAt: null, durationMs: null, bytes: null, reused: false, reason: null };

export function createRunStatusFold(options: RunStatusFoldOptions = {}): RunStatusFold {
  const followsLatest = options.runId === undefined;
  let runId: string | null = options.runId ?? null;
  let run: RunRecord | null = null;
  let totals = emptyTotals();
  let agents = new Map<string, AgentRecord>();
  let paused = new Set<string>();
  let userAndon: UserAndon | null = null;
  let workers: number | null = null;
  let budget: BudgetRecord | null = null;
  let sandbox: { -readonly [K in keyof SandboxStatus]: SandboxStatus[K] } | null = null;
  let setup: SetupStatus | null = null;
  // The latest verdict per task: checks run again after a restart replace the earlier ones.
  let verdicts = new Map<string, 'passed' | 'failed' | 'not-run' | 'false-claim'>();
  let salvaged: SalvagedWorkStatus[] = [];
  let trunkRewrites: TrunkRewriteStatus[] = [];
  let green = createGreenHealthFold();
  let hosts = createHostFold();
  let lastSeq = 0;

  /** What one model call cost, added to the run's totals and to its agent's. */
  function spend(usage: EventData<'model.responded'>['usage'], costUsd: number | null, agent: AgentRecord | undefined): void {
    totals.inputTokens += usage.inputTokens;
    totals.outputTokens += usage.outputTokens;
    totals.cachedInputTokens += usage.cachedInputTokens;
    totals.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
    totals.costUsd += costUsd ?? 0;
    if (costUsd === null) totals.costKnown = false;
    if (agent === undefined) return;
    agent.tokens += usage.inputTokens + usage.outputTokens;
    agent.costUsd += costUsd ?? 0;
  }

  function startOver(nextRunId: string): void {
    runId = nextRunId;
    run = null;
    totals = emptyTotals();
    agents = new Map();
    paused = new Set();
    userAndon = null;
    workers = null;
    budget = null;
    sandbox = null;
    setup = null;
    verdicts = new Map();
    salvaged = [];
    trunkRewrites = [];
    green = createGreenHealthFold();
    hosts = createHostFold();
  }

  function add(event: ColonyEvent): void {
    if (event.seq <= lastSeq) return;
    lastSeq = event.seq;
    if (event.type === 'run.started' && followsLatest && event.runId !== runId) startOver(event.runId);
    if (event.runId !== runId) return;
    totals.lastEventAt = Math.max(totals.lastEventAt, event.ts);
    // The green fold takes every event of the run: its clock (for main's red time) runs on them all.
    green.add(event);
    hosts.add(event);
    const agent = agents.get(event.agentId);
    switch (event.type) {
      case 'run.started':
        run = { ...event.data, startedAt: event.ts, ended: null, resumes: 0 };
        return;
      case 'run.ended':
        if (run !== null) run.ended = { status: event.data.status, at: event.ts, durationMs: event.data.durationMs };
        return;
      case 'run.resumed':
        // A stopped or crashed run taken up again is running again.
        if (run !== null) {
          run.ended = null;
          run.resumes = event.data.resumes;
        }
        return;
      case 'agent.started':
        if (agent === undefined) {
          agents.set(event.agentId, {
            id: event.agentId,
            role: event.data.role,
            parentId: event.data.parentAgentId ?? null,
            state: 'running',
            taskId: event.data.taskId,
            title: event.data.title,
            steps: 0,
            tokens: 0,
            costUsd: 0,
            startedAt: event.ts,
            endedAt: null,
            reason: null,
            summary: null,
            scratchpad: null,
            compactions: 0,
            host: hosts.hostOfTask(event.data.taskId),
          });
        } else {
          // The same agent rebuilt after a restart carries on from where it was.
          agent.state = 'running';
          agent.endedAt = null;
          agent.reason = null;
        }
        return;
      case 'agent.waiting':
        if (agent !== undefined) agent.state = 'waiting';
        return;
      case 'agent.parked':
        if (agent !== undefined) agent.state = 'parked';
        return;
      case 'agent.restored':
        // Taken up again after a restart, whatever its last life recorded as its end.
        if (agent !== undefined) {
          agent.state = 'running';
          agent.endedAt = null;
          agent.reason = null;
        }
        return;
      case 'agent.unparked':
      case 'model.requested':
      case 'message.received':
        if (agent?.state === 'waiting' || agent?.state === 'parked') agent.state = 'running';
        return;
      case 'model.responded':
        totals.modelCalls += 1;
        spend(event.data.usage, event.data.costUsd, agent);
        if (agent !== undefined) agent.steps = Math.max(agent.steps, event.data.step);
        return;
      case 'context.compacted': {
        // A summary is a model call of its own: its tokens and cost are the run's like any other.
        const { usage, costUsd } = event.data;
        totals.compactions += 1;
        totals.compactionTokens += usage.inputTokens + usage.outputTokens;
        spend(usage, costUsd, agent);
        if (agent !== undefined) agent.compactions += 1;
        return;
      }
      case 'scratchpad.written':
        if (agent !== undefined) agent.scratchpad = event.data.content;
        return;
      case 'tool.started':
        totals.toolCalls += 1;
        return;
      case 'merge.landed':
        totals.commitsLanded += 1;
        return;
      case 'agent.failed':
        if (agent !== undefined) endAgent(agent, 'failed', event.data.steps, event.data.reason, event.ts);
        return;
      case 'agent.ended':
        if (agent !== undefined) endAgent(agent, endedState(event.data.status), event.data.steps, event.data.reason, event.ts);
        return;
      case 'handoff.submitted':
        if (agent !== undefined) agent.summary = event.data.handoff.summary;
        return;
      case 'acceptance.checked': {
        const { taskId, claimed, passed, skipped } = event.data;
        const results = event.data.results.map((result) => ({ ...result, passed: result.exitCode === 0 }));
        const falseClaim = isFalseClaim({ status: claimed, acceptance: { passed, skipped, results } });
        verdicts.set(taskId, skipped !== null ? 'not-run' : passed ? 'passed' : falseClaim ? 'false-claim' : 'failed');
        return;
      }
      case 'planner.finished':
        if (agent !== undefined) agent.summary = event.data.summary;
        return;
      case 'andon.changed':
        if (event.data.taskId === null) userAndon = event.data.paused ? { reason: event.data.reason, since: event.ts } : null;
        else if (event.data.paused) paused.add(event.data.taskId);
        else paused.delete(event.data.taskId);
        return;
      case 'dependencies.installing':
        if (event.data.elapsedMs === 0 || setup?.state !== 'installing') {
          setup = { ...NO_SETUP, state: 'installing', command: event.data.command, registry: event.data.registry, startedAt: event.ts - event.data.elapsedMs };
        }
        return;
      case 'dependencies.prepared': {
        const { command, registry } = setup?.state === 'installing' ? setup : { command: event.data.command ?? null, registry: null };
        setup = { ...NO_SETUP, state: 'ready', command, registry, startedAt: setup?.startedAt ?? null, durationMs: event.data.durationMs, bytes: event.data.bytes, reused: event.data.reused };
        return;
      }
      case 'dependencies.failed':
        setup = { ...NO_SETUP, ...(setup ?? {}), state: 'failed', durationMs: event.data.durationMs, reason: event.data.error };
        return;
      case 'dependencies.skipped':
        // A workspace that could not take the layer records a skip too; the run's setup stands.
        if (setup === null || setup.state === 'installing') setup = { ...NO_SETUP, state: 'skipped', reason: event.data.reason };
        return;
      case 'sandbox.opened':
        sandbox = { method: event.data.method, network: event.data.network, networkAllowed: 0, networkRefused: 0 };
        return;
      case 'network.requested':
        // The setup's own requests go to the registries through a proxy of its own; these counts are the agents'.
        if (sandbox !== null && event.data.setup !== true) {
          if (event.data.allowed) sandbox.networkAllowed += 1;
          else sandbox.networkRefused += 1;
        }
        return;
      case 'budget.set':
        budget = {
          tokens: event.data.tokens,
          usd: event.data.usd,
          timeMs: event.data.maxHours === null ? null : event.data.maxHours * 3_600_000,
          warned: [],
          exhausted: [],
        };
        return;
      case 'budget.warned':
        budget?.warned.push(budgetEvent(event.data));
        return;
      case 'budget.exhausted':
        budget?.exhausted.push(budgetEvent(event.data));
        return;
      case 'run.configured':
        workers = event.data.settings.workers;
        return;
      case 'workspace.salvaged':
        salvaged.push({ agentId: event.agentId, ref: event.data.branch, sideRef: event.data.sideBranch, files: event.data.files.length });
        return;
      case 'trunk.rewritten':
        trunkRewrites.push(event.data);
        return;
      case 'workers.changed':
        workers = event.data.workers;
        return;
      case 'agent.stop-requested':
      case 'budget.allotted':
      case 'prompts.loaded':
      case 'disk.full':
      case 'disk.recovered':
      case 'agent.hung':
      case 'agent.nudged':
      case 'context.shrunk':
      case 'context.compaction-failed':
      case 'model.retried':
      case 'model.failed':
      case 'tool.ended':
      case 'workspace.created':
      case 'workspace.reopened':
      case 'workspace.removed':
      case 'dependencies.linked':
      case 'dependencies.collected':
      case 'workspace.method-chosen':
      case 'workspace.swept':
      case 'workspace.quota-reached':
      case 'merge.attempted':
      case 'merge.intended':
      case 'merge.conflicted':
      case 'acceptance.started':
      case 'merge.checked':
      case 'task.created':
      case 'task.claimed':
      case 'task.released':
      case 'handoff.delivered':
      case 'goal.changed':
      case 'message.sent':
      case 'main.checked':
      case 'provider.limited':
      case 'provider.circuit-opened':
      case 'provider.circuit-closed':
      case 'trunk.unfollowed':
        return;
      case 'green.checked':
      case 'green.requested':
      case 'green.advanced':
      case 'green.blocked':
      case 'green.bisected':
      case 'green.reported':
      case 'host.joined':
      case 'host.left':
        // Folded by the green and host folds above, with every other event.
        return;
      default:
        assertNever(event);
    }
  }

  function snapshot(context: RunStatusContext): RunStatus | null {
    if (run === null || runId === null) return null;
    const id = runId;
    const ended = run.ended;
    const clock = context.now ?? totals.lastEventAt;
    return {
      run: {
        id,
        state: ended === null ? 'running' : ended.status,
        mode: run.mode,
        repo: run.repo,
        model: run.model,
        title: run.title,
        trunk: run.trunk?.branch ?? null,
        checkedOut: run.trunk?.checkedOut ?? null,
        startedAt: run.startedAt,
        resumes: run.resumes,
        endedAt: ended?.at ?? null,
        durationMs: ended === null ? Math.max(0, clock - run.startedAt) : ended.durationMs,
        lastEventAt: totals.lastEventAt,
      },
      tasks: countTasks(context.tasks.filter((task) => task.runId === id)),
      handoffs: { delivered: context.deliveredHandoffs.filter((message) => message.runId === id).length },
      commits: { landed: totals.commitsLanded },
      acceptance: countVerdicts(verdicts),
      tokens: {
        input: totals.inputTokens,
        output: totals.outputTokens,
        cachedInput: totals.cachedInputTokens,
        cacheWrite: totals.cacheWriteTokens,
        total: totals.inputTokens + totals.outputTokens,
      },
      costUsd: roundDollars(totals.costUsd),
      costKnown: totals.costKnown,
      modelCalls: totals.modelCalls,
      toolCalls: totals.toolCalls,
      compaction: { count: totals.compactions, tokens: totals.compactionTokens },
      pausedTaskIds: [...paused],
      userAndon: userAndon === null ? null : { ...userAndon },
      workers,
      agents: [...agents.values()].map((agent): AgentStatus => ({ ...agent, costUsd: roundDollars(agent.costUsd) })),
      budget:
        budget === null
          ? null
          : {
              tokens: budget.tokens === null ? null : { limit: budget.tokens, spent: totals.inputTokens + totals.outputTokens },
              usd: budget.usd === null ? null : { limit: budget.usd, spent: roundDollars(totals.costUsd) },
              time: budget.timeMs === null ? null : { limit: budget.timeMs, spent: ended === null ? Math.max(0, clock - run.startedAt) : ended.durationMs },
              warned: [...budget.warned],
              exhausted: [...budget.exhausted],
            },
      sandbox: sandbox === null ? null : { ...sandbox },
      setup,
      green: green.active ? greenStatusOf(green.result()) : null,
      salvaged: [...salvaged],
      trunkRewrites: [...trunkRewrites],
      hosts: hosts.hosts(),
    };
  }

  return {
    add,
    get runId() {
      return runId;
    },
    snapshot,
  };
}

function budgetEvent(data: BudgetEvent): BudgetEvent {
  return { taskId: data.taskId, scope: data.scope, measure: data.measure, spent: data.spent, limit: data.limit };
}

function endAgent(agent: AgentRecord, state: AgentState, steps: number, reason: string, at: number): void {
  agent.state = state;
  agent.steps = steps;
  agent.reason = reason;
  agent.endedAt = at;
}

/** An ended status colony does not know is shown as failed rather than hidden among the running. */
function endedState(status: string): AgentState {
  const parsed = handoffStatusSchema.safeParse(status);
  return parsed.success ? parsed.data : 'failed';
}

/** Sums of float prices drift (0.1 + 0.2); a millionth of a dollar is finer than any price. */
function roundDollars(amount: number): number {
  return Math.round(amount * 1e6) / 1e6;
}

function assertNever(value: never): never {
  throw new Error(`unhandled event: ${JSON.stringify(value)}`);
}
