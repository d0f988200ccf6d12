import { handoffSchema } from '../../events/handoff.js';
import type { Handoff, HandoffStatus } from '../../events/handoff.js';
import type { CreateTaskResult, NewTask, TaskKind, TaskRecord, TaskStore, ClaimRequest, Lease } from '../tasks/task-store.js';

export const RUN_ID = 'run-1';

/** The root planner's task of a run: no parent, nobody published it. */
export function rootTask(runId = RUN_ID, id = `root-of-${runId}`): NewTask {
  return {
    id,
    runId,
    parentTaskId: null,
    createdBy: null,
    kind: 'planner',
    title: 'Build the goal',
    body: '# Goal\n\nMake the parser handle comments.',
    scope: '',
    retryOf: null,
  };
}

/** A task published by the planner of `parentTaskId`. */
export function childTask(
  id: string,
  parentTaskId: string,
  kind: TaskKind = 'worker',
  overrides: Partial<NewTask> = {},
): NewTask {
  return {
    id,
    runId: RUN_ID,
    parentTaskId,
    createdBy: `agent-of-${parentTaskId}`,
    kind,
    title: `Task ${id}`,
    body: `Do the work of ${id}.\n\n- keep the tests green\n- naïve café 🐜`,
    scope: kind === 'planner' ? `src/${id}/` : null,
    retryOf: null,
    ...overrides,
  };
}

/** The task a `createTask` made; a refusal fails the test that expected none. */
export function createdTask(result: CreateTaskResult): TaskRecord {
  if (!result.ok) throw new Error(`createTask was refused: ${result.error}`);
  return result.task;
}

export function handoffOf(status: HandoffStatus, summary: string, extra: Partial<Handoff> = {}): Handoff {
  return handoffSchema.parse({ status, summary, ...extra });
}

/** A small seeded generator, so a randomised test fails the same way every time it fails. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

/** What the suite needs of an implementation: a fresh empty store, and how to dispose of it. */
export interface TaskStoreUnderTest {
  readonly store: TaskStore;
  /** Opens another connection to the same store, for stores that outlive a connection. */
  readonly reopen?: () => Promise<TaskStore>;
  /** Closes every store it opened and removes what the store kept. */
  readonly cleanup: () => Promise<void>;
}

/** Makes a fresh, empty store for one test of a suite. */
export type OpenTaskStoreUnderTest = () => Promise<TaskStoreUnderTest>;

/** Worker and planner tasks alike. */
export const BOTH: readonly TaskKind[] = ['worker', 'planner'];

/** A claim for the suite's run: worker tasks by default, with a one-second lease. */
export function claimRequest(holder: string, now: number, kinds: readonly TaskKind[] = ['worker'], leaseMs = 1_000): ClaimRequest {
  return { runId: RUN_ID, holder, kinds, now, leaseMs };
}

export function lease(holder: string, attempt = 1): Lease {
  return { holder, attempt };
}

/** Claims until nothing is left; the ids in the order they were handed out. */
export async function claimAll(store: TaskStore, claim: ClaimRequest): Promise<string[]> {
  const ids: string[] = [];
  for (let task = await store.claim(claim); task !== null; task = await store.claim(claim)) ids.push(task.id);
  return ids;
}
