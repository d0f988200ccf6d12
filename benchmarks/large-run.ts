import { seededRandom } from '../src/bench/merge/seeded-random.js';
import type { EventBody } from '../src/events/event-types.js';
import type { AgentRole } from '../src/events/event-fields.js';
import type { Handoff, HandoffStatus } from '../src/events/handoff.js';
import type { EventInput } from '../src/store/events/event-store.js';
import { createRunTexts, hex, shortId, type ToolUse } from './large-run-texts.js';

/**
 * The shape of a large generated run: a root planner delegating to sub-planners, each
 * publishing tasks to workers that read, edit, test, land commits and hand off, all at once.
 */
export interface LargeRunShape {
  /** Events the log should hold when `settle` is called; sizes the workers' tasks. */
  readonly events: number;
  /** Every agent: the root planner, the sub-planners and the workers. */
  readonly agents: number;
  readonly subPlanners: number;
  /** Workers running at once across the tree. */
  readonly workersAtOnce: number;
  /** The workers started last never finish: the run is busy whenever it is cut. */
  readonly stillRunning: number;
  readonly seed: number;
}

/** A run whose events are produced one moment at a time, in the order colony would log them. */
export interface LargeRun {
  readonly runId: string;
  /** The events of the next moment of some agent, stamped `ts`; empty when every agent has ended or waits. */
  next(ts: number): EventInput[];
  /** Moves every running worker on until it is inside a tool call, so the cut log has calls in flight. */
  settle(ts: () => number): EventInput[];
  /** Agents started so far, and those not ended. */
  agents(): { readonly started: number; readonly running: number; readonly workersRunning: number };
  /** Events recorded so far under an agent's id. */
  eventsOf(agentId: string): number;
  /** The running worker whose events so far come closest to `events` (an agent whose page is worth opening). */
  runningWorkerNear(events: number): string | null;
}

interface Recorded {
  readonly agentId: string;
  readonly body: EventBody;
}
type Life = Generator<readonly Recorded[] | 'wait', void, void>;

interface Actor {
  readonly id: string;
  readonly role: AgentRole;
  readonly life: Life;
  lastType: EventBody['type'] | null;
  waiting: boolean;
  ended: boolean;
}

const SYSTEM_PROMPT = 'You are an agent of colony. '.repeat(70);
const WORKER_TOOLS = ['read_file', 'write_file', 'edit_file', 'list_files', 'search', 'run_command', 'merge_to_main', 'submit_handoff'];
const PLANNER_TOOLS = ['read_file', 'list_files', 'search', 'create_task', 'delegate', 'write_scratchpad', 'finish'];
/** A worker lands what it has every this many steps, and once more before its handoff. */
const LAND_EVERY = 120;

export function createLargeRun(shape: LargeRunShape): LargeRun {
  const random = seededRandom(shape.seed);
  const texts = createRunTexts(seededRandom(shape.seed + 1));
  const runId = `run-${shortId(random)}`;
  const workers = shape.agents - 1 - shape.subPlanners;
  const finiteWorkers = workers - shape.stillRunning;
  const atOnce = Math.max(1, Math.round(shape.workersAtOnce / shape.subPlanners));
  if (shape.stillRunning > atOnce * shape.subPlanners) throw new Error(`${shape.stillRunning} workers cannot stay running with ${atOnce} at once under each of ${shape.subPlanners} planners`);
  /** The part of `total` the planner at `index` takes when it is spread evenly over the sub-planners. */
  const spread = (total: number, index: number) => Math.floor(total / shape.subPlanners) + (index < total % shape.subPlanners ? 1 : 0);
  // Workers that end write about three fifths of the log; those still running when it is cut, the rest.
  const meanSteps = Math.max(10, Math.round((0.6 * shape.events) / (4 * Math.max(1, finiteWorkers))));
  const actors = new Map<string, Actor>();
  const ready: Actor[] = [];
  const inboxes = new Map<string, string[]>();
  const counts = new Map<string, number>();

  const spawn = (id: string, role: AgentRole, life: Life): void => {
    const actor: Actor = { id, role, life, lastType: null, waiting: false, ended: false };
    actors.set(id, actor);
    ready.push(actor);
  };
  const tell = (plannerId: string, message: string): void => {
    inboxes.get(plannerId)?.push(message);
    const planner = actors.get(plannerId);
    if (planner?.waiting === true) {
      planner.waiting = false;
      ready.push(planner);
    }
  };
  const usage = (step: number) => {
    const inputTokens = Math.min(120_000, 3_000 + step * 180 + Math.floor(random() * 2_000));
    const outputTokens = 60 + Math.floor(random() * 440);
    const cachedInputTokens = Math.floor(inputTokens * 0.8);
    const costUsd = Math.round(((inputTokens - cachedInputTokens) * 3 + cachedInputTokens * 0.3 + outputTokens * 15) / 1_000) / 1_000;
    return { usage: { inputTokens, outputTokens, cachedInputTokens }, costUsd };
  };

  /** One model call answered with one tool call, and the call run: `during` is logged while it runs. */
  function* step(agentId: string, number: number, use: ToolUse, during: readonly Recorded[] = []): Life {
    const callId = `call-${shortId(random)}`;
    const spent = usage(number);
    yield [{ agentId, body: { type: 'model.requested', data: { step: number, model: 'sim', messages: number * 2 + 2, chars: spent.usage.inputTokens * 4 } } }];
    const call = { id: callId, name: use.name, input: use.input };
    const responded = { step: number, text: texts.thought(random), toolCalls: [call], finishReason: 'tool-calls', ...spent, durationMs: 800 + Math.floor(random() * 6_000), attempts: 1 };
    yield [{ agentId, body: { type: 'model.responded', data: responded } }];
    yield [{ agentId, body: { type: 'tool.started', data: { step: number, callId, name: use.name, input: use.input } } }];
    for (const recorded of during) yield [recorded];
    yield [{ agentId, body: { type: 'tool.ended', data: { step: number, callId, name: use.name, ok: use.ok, output: use.output, durationMs: 20 + Math.floor(random() * 4_000) } } }];
  }

  function started(agentId: string, role: AgentRole, taskId: string, title: string, parentAgentId: string | null): Recorded[] {
    const kind = role === 'worker' ? 'worker' : 'planner';
    const tools = role === 'worker' ? WORKER_TOOLS : PLANNER_TOOLS;
    return [
      { agentId: 'system', body: { type: 'task.claimed', data: { taskId, kind, attempt: 1, holder: 'runner-1' } } },
      { agentId, body: { type: 'agent.started', data: { role, taskId, title, model: 'sim', systemPrompt: SYSTEM_PROMPT, task: `Task: ${title}\n\nDone when its tests pass on main.`, tools, parentAgentId, attempt: 1 } } },
    ];
  }

  /** A planner's tool call that publishes a task; the agent that takes it starts right after. */
  function* publish(plannerId: string, number: number, plannerTaskId: string, kind: 'worker' | 'planner', title: string): Generator<readonly Recorded[] | 'wait', string, void> {
    const taskId = `task-${shortId(random)}`;
    const created: Recorded = { agentId: 'system', body: { type: 'task.created', data: { taskId, parentTaskId: plannerTaskId, kind, title, scope: null, retryOf: null } } };
    const tool = kind === 'worker' ? 'create_task' : 'delegate';
    yield* step(plannerId, number, { name: tool, input: JSON.stringify({ title, description: `${title}: see the goal's section on it.` }), output: `published ${taskId}`, ok: true }, [created]);
    return taskId;
  }

  function* handOff(agentId: string, number: number, taskId: string, parentTaskId: string, status: HandoffStatus, summary: string, commits: string[]): Life {
    const handoff: Handoff = { status, summary, commits, evidence: 'npm test: all passed', notes: [`${summary}; kept the public API.`], concerns: status === 'done' ? [] : ['one test is still flaky'], deviations: [], findings: ['The spec leaves error messages open.'], feedback: [], followUps: [], synthetic: false };
    yield* step(agentId, number, { name: 'submit_handoff', input: JSON.stringify({ status, summary }), output: 'handoff submitted', ok: true }, [{ agentId, body: { type: 'handoff.submitted', data: { taskId, handoff } } }]);
    yield [
      { agentId, body: { type: 'agent.ended', data: { status, steps: number, reason: 'handoff submitted' } } },
      { agentId: 'system', body: { type: 'handoff.delivered', data: { taskId, parentTaskId, status } } },
    ];
  }

  function* workerLife(id: string, taskId: string, title: string, planner: { id: string; taskId: string }, module: string, steps: number): Life {
    yield started(id, 'worker', taskId, title, planner.id);
    yield [{ agentId: id, body: { type: 'workspace.created', data: { path: `/srv/colony/workspaces/${id}-1`, branch: `colony/${id}`, baseCommit: hex(random, 40), durationMs: 30, method: 'worktree' } } }];
    const commits: string[] = [];
    let number = 0;
    const land = function* (): Life {
      const commit = hex(random, 40);
      commits.push(commit);
      const landed: Recorded = { agentId: id, body: { type: 'merge.landed', data: { commit, mainBefore: hex(random, 40), attempts: 1, files: [`src/${module}/index.ts`, `src/${module}/index.test.ts`], durationMs: 120 } } };
      const conflicted: Recorded[] = random() < 0.1 ? [{ agentId: id, body: { type: 'merge.conflicted', data: { files: [`src/${module}/index.ts`], mainBefore: hex(random, 40) } } }] : [];
      number += 1;
      yield* step(id, number, { name: 'merge_to_main', input: '{}', output: `landed ${commit.slice(0, 12)} on main`, ok: true }, [...conflicted, landed]);
    };
    while (number < steps) {
      number += 1;
      yield* step(id, number, texts.toolUse(random, module));
      if (number % LAND_EVERY === 0) yield* land();
    }
    yield* land();
    const status: HandoffStatus = random() < 0.85 ? 'done' : 'partial';
    yield* handOff(id, number + 1, taskId, planner.taskId, status, `${title}: ${status === 'done' ? 'built and tested' : 'mostly built'}`, commits);
    tell(planner.id, `${id} handed off ${status}: ${title}`);
  }

  /** A planner that publishes `children` tasks, `atOnce` open at a time, reads each handoff, then hands off itself. */
  function* plannerLife(id: string, role: AgentRole, taskId: string, title: string, parent: { id: string; taskId: string } | null, children: number, atOnce: number, index: number): Life {
    inboxes.set(id, []);
    yield started(id, role, taskId, title, parent?.id ?? null);
    let number = 0;
    for (let read = 0; read < 3; read += 1) {
      number += 1;
      yield* step(id, number, texts.toolUse(random, `area-${index}`));
    }
    const note = (): Recorded => ({ agentId: id, body: { type: 'scratchpad.written', data: { content: `Plan for ${title}:\n${texts.thought(random)}\n${texts.thought(random)}` } } });
    let published = 0;
    let open = 0;
    for (;;) {
      const message = inboxes.get(id)?.shift();
      if (message !== undefined) {
        open -= 1;
        number += 1;
        yield [{ agentId: id, body: { type: 'message.received', data: { step: number, fromTaskId: null, content: message } } }];
        yield* step(id, number, { name: 'write_scratchpad', input: '{}', output: 'saved', ok: true }, [note()]);
      } else if (published < children && open < atOnce) {
        number += 1;
        const childTask = yield* publish(id, number, taskId, role === 'root-planner' ? 'planner' : 'worker', `${role === 'root-planner' ? 'Area' : 'Module'} ${index}.${published + 1}`);
        startChild(id, taskId, childTask, role, index, published);
        published += 1;
        open += 1;
      } else if (open > 0) {
        yield [{ agentId: id, body: { type: 'agent.waiting', data: { step: number, openChildren: open } } }];
        yield 'wait';
      } else break;
    }
    if (parent !== null) {
      yield* handOff(id, number + 1, taskId, parent.taskId, 'done', `${title}: every task handed off`, []);
      tell(parent.id, `${id} handed off done: ${title}`);
    }
  }

  function startChild(plannerId: string, plannerTaskId: string, childTask: string, plannerRole: AgentRole, plannerIndex: number, childIndex: number): void {
    const planner = { id: plannerId, taskId: plannerTaskId };
    if (plannerRole === 'root-planner') {
      const id = `planner-${shortId(random)}`;
      spawn(id, 'sub-planner', plannerLife(id, 'sub-planner', childTask, `Area ${childIndex + 1}`, planner, spread(workers, childIndex), atOnce, childIndex + 1));
      return;
    }
    const id = `worker-${shortId(random)}`;
    // Each planner's last tasks are the endless ones, so they never hold all its slots while it has tasks to publish.
    const plannerShare = spread(workers, plannerIndex - 1);
    const endless = childIndex >= plannerShare - spread(shape.stillRunning, plannerIndex - 1);
    const steps = endless ? Number.POSITIVE_INFINITY : Math.round(meanSteps * (0.3 + 1.4 * random()));
    const title = `Module ${plannerIndex}.${childIndex + 1}`;
    spawn(id, 'worker', workerLife(id, childTask, title, planner, `module-${plannerIndex}-${childIndex + 1}`, steps));
  }

  const rootId = `planner-${shortId(random)}`;
  const rootTask = `task-${shortId(random)}`;
  let opened = false;

  function advance(actor: Actor, index: number, ts: number): EventInput[] | null {
    const result = actor.life.next();
    if (result.done === true || result.value === 'wait') {
      actor.ended = result.done === true;
      actor.waiting = !actor.ended;
      ready.splice(index, 1);
      return null;
    }
    return result.value.map((recorded) => {
      if (recorded.agentId === actor.id) actor.lastType = recorded.body.type;
      counts.set(recorded.agentId, (counts.get(recorded.agentId) ?? 0) + 1);
      return { ...recorded.body, runId, agentId: recorded.agentId, ts };
    });
  }

  return {
    runId,
    next(ts) {
      if (!opened) {
        opened = true;
        spawn(rootId, 'root-planner', plannerLife(rootId, 'root-planner', rootTask, 'Build the platform', null, shape.subPlanners, shape.subPlanners, 0));
        return [
          { type: 'run.started', data: { mode: 'run', repo: '/srv/project', model: 'sim', title: 'Build the platform' }, runId, agentId: 'system', ts },
          { type: 'task.created', data: { taskId: rootTask, parentTaskId: null, kind: 'planner', title: 'Build the platform', scope: null, retryOf: null }, runId, agentId: 'system', ts },
        ];
      }
      while (ready.length > 0) {
        const index = Math.floor(random() * ready.length);
        const actor = ready[index];
        if (actor === undefined) break;
        const events = advance(actor, index, ts);
        if (events !== null) return events;
      }
      return [];
    },
    settle(ts) {
      const events: EventInput[] = [];
      for (const actor of [...ready]) {
        while (actor.role === 'worker' && !actor.ended && actor.lastType !== 'tool.started') {
          const moment = advance(actor, ready.indexOf(actor), ts());
          if (moment !== null) events.push(...moment);
        }
      }
      return events;
    },
    agents() {
      const all = [...actors.values()];
      return {
        started: all.length,
        running: all.filter((actor) => !actor.ended).length,
        workersRunning: all.filter((actor) => actor.role === 'worker' && !actor.ended).length,
      };
    },
    eventsOf: (agentId) => counts.get(agentId) ?? 0,
    runningWorkerNear(events) {
      let best: { id: string; distance: number } | null = null;
      for (const actor of actors.values()) {
        if (actor.role !== 'worker' || actor.ended) continue;
        const distance = Math.abs((counts.get(actor.id) ?? 0) - events);
        if (best === null || distance < best.distance) best = { id: actor.id, distance };
      }
      return best?.id ?? null;
    },
  };
}
