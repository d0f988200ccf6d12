import type { Arguments, FakeHandoff, FakeTask, PlannerSession } from './planner-tools.js';
import { createPlannerSession, PASSING_TESTS, subPlannerBrief } from './planner-tools.js';

/**
 * Runs a sim planner and, recursively, the sim sub-planners it delegates to, the way colony
 * would: each planner's waits are answered by delivering one handoff of an open task; a
 * worker task's handoff comes from the test, a sub-planner's from its own finish.
 */

export interface TreeSetup {
  readonly brief: string;
  /** The handoff of a worker task. */
  readonly respond: (task: FakeTask) => FakeHandoff;
  /** Answers a planner's run_command; `scope` is null for the root. Passing tests by default. */
  readonly runCommand?: (command: string, scope: string | null) => string;
  readonly maxTurns?: number;
}

export interface PlannerRun {
  readonly scope: string | null;
  readonly session: PlannerSession;
  /** The arguments of its last finish, or null when it never finished. */
  readonly finish: Arguments | null;
}

export interface TreeRun {
  readonly root: PlannerRun;
  /** Every planner that ran, the root first, then sub-planners in the order they finished. */
  readonly planners: readonly PlannerRun[];
  /** Every worker task published anywhere in the tree, in order. */
  readonly workerTasks: readonly FakeTask[];
}

export function runPlannerTree(setup: TreeSetup): TreeRun {
  let count = 0;
  const newTaskId = (): string => `task_${++count}`;
  const planners: PlannerRun[] = [];
  const workerTasks: FakeTask[] = [];

  function runPlanner(brief: string, scope: string | null): PlannerRun {
    const runCommand = (command: string): string => setup.runCommand?.(command, scope) ?? PASSING_TESTS;
    const session = createPlannerSession({ brief, runCommand, newTaskId });
    let finish: Arguments | null = null;
    for (let turn = 0; turn < (setup.maxTurns ?? 200); turn += 1) {
      const before = session.tasks.length;
      const answer = session.turn();
      workerTasks.push(...session.tasks.slice(before).filter((task) => task.kind === 'worker'));
      const open = session.openTasks();
      if (answer.toolCalls.some((call) => call.name === 'finish')) finish = session.finishes.at(-1) ?? null;
      if (answer.toolCalls.length > 0) {
        if (finish !== null && open.length === 0 && answer.toolCalls.every((call) => call.name === 'finish')) break;
        continue;
      }
      const next = open[0];
      if (next === undefined) break;
      session.handOff(next.id, next.kind === 'worker' ? setup.respond(next) : subPlannerHandoff(next));
    }
    const run = { scope, session, finish };
    planners.push(run);
    return run;
  }

  function subPlannerHandoff(task: FakeTask): FakeHandoff {
    const child = runPlanner(subPlannerBrief(task.scope ?? '', task.brief), task.scope);
    if (child.finish === null) return { status: 'failed', summary: 'The sub-planner ended without finishing.', synthetic: true };
    const status = child.finish.status;
    return {
      status: status === 'partial' || status === 'blocked' || status === 'failed' ? status : 'done',
      summary: String(child.finish.summary),
      notes: strings(child.finish.notes),
      concerns: strings(child.finish.concerns),
    };
  }

  const root = runPlanner(setup.brief, null);
  return { root, planners: [root, ...planners.filter((run) => run !== root)], workerTasks };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
