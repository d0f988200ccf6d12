import { PUBLISH_BOUND_OPENING, REPUBLISHED_OPENING, RETRY_CAP_OPENING } from '../../protocol/message-openings.js';

/** A refused tool call's result as the sim reads it: `error: ` and the reason colony gave. */
function reasonOf(content: string): string {
  return content.replace(/^error: /, '');
}

/**
 * The bound a refusal of a publish beyond its answer's bound names (`at most N tasks`), or null
 * when the refusal is of another kind: the task was not refused for itself, and goes out again
 * in a later answer.
 */
export function publishBoundOf(content: string): number | null {
  const reason = reasonOf(content);
  if (!reason.startsWith(PUBLISH_BOUND_OPENING)) return null;
  const bound = /at most (\d+) tasks/.exec(reason)?.[1];
  return bound === undefined ? null : Number(bound);
}

/** Whether a refusal says the task's retries are used up: it is not sent again as it is. */
export function isRetryCapRefusal(content: string): boolean {
  return reasonOf(content).startsWith(RETRY_CAP_OPENING);
}

/** Whether a refusal says the brief is a failed task's, published again without `retry_of`: the task is retried with it instead. */
export function isRepublishRefusal(content: string): boolean {
  return reasonOf(content).startsWith(REPUBLISHED_OPENING);
}
