import type { RunControlStore } from '../../store/tasks/task-store.js';

/**
 * The user's stop of the agent on one task (`colony stop`), as the runner gets it: the abort
 * reason of that agent's signal, so the runner tells it apart from the run stopping (its task
 * goes back to the store) and from a hang.
 */
export interface UserStop {
  readonly kind: 'user-stop';
  readonly taskId: string;
  readonly reason: string;
  /** The request's seq in the task store (`RunRequest`). */
  readonly requestSeq: number;
}

/** Whether an abort reason is the user's stop. */
export function isUserStop(reason: unknown): reason is UserStop {
  return typeof reason === 'object' && reason !== null && (reason as { kind?: unknown }).kind === 'user-stop';
}

/**
 * The user's stop of `taskId`, or null when none was asked for. A task is stopped at most once
 * (it closes), so the first request is the one that counts.
 */
export async function requestedStopOf(tasks: RunControlStore, runId: string, taskId: string): Promise<UserStop | null> {
  const request = (await tasks.runRequests(runId, 0)).find((candidate) => candidate.kind === 'stop' && candidate.taskId === taskId);
  return request === undefined ? null : { kind: 'user-stop', taskId, reason: request.reason, requestSeq: request.seq };
}
