import type { ProcessRequest } from './types.js';

/** Why a command is being stopped, once it is: its time ran out, or its caller aborted it. */
export interface CommandDeadline {
  readonly timedOut: boolean;
  readonly aborted: boolean;
  /** The command ended: its time no longer runs out. */
  settle(): void;
  /** The result is out: nothing of the request is listened to any more. */
  dispose(): void;
}

/**
 * Calls `stop` when the request's wall-clock limit passes or its signal aborts (at once when it
 * aborted before), and remembers which. The command runners and ripgrep all stop this way.
 */
export function armDeadline(request: Pick<ProcessRequest, 'timeoutMs' | 'signal'>, stop: () => void): CommandDeadline {
  let timedOut = false;
  let aborted = false;
  const onAbort = (): void => {
    aborted = true;
    stop();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, request.timeoutMs);
  request.signal?.addEventListener('abort', onAbort, { once: true });
  // The signal may have fired while the command was being prepared.
  if (request.signal?.aborted === true) onAbort();
  return {
    get timedOut() {
      return timedOut;
    },
    get aborted() {
      return aborted;
    },
    settle: () => clearTimeout(timer),
    dispose: () => {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
    },
  };
}
