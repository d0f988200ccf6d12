/**
 * An agent that was stopped ends as a failed one does, with `agent.failed` and the reason, but
 * it did not fail: the run was stopped, a person stopped it, or colony found it hung (which
 * `agent.hung` records as well). Its reason starts with this, so a view can tell the two apart.
 */
const STOPPED_PREFIX = 'stopped: ';

/** The `agent.failed` reason of an agent stopped for `explanation`. */
export function stoppedReason(explanation: string): string {
  return `${STOPPED_PREFIX}${explanation}`;
}

/** Whether an `agent.failed` reason is that of a stop, not a failure. */
export function isStoppedReason(reason: string): boolean {
  return reason.startsWith(STOPPED_PREFIX);
}
