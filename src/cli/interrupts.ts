/** Signals that ask colony to stop: Ctrl-C, `kill`, and a closed terminal or SSH session. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Further signals after the first, before colony quits without finishing its step. */
const SIGNALS_TO_FORCE = 3;

export interface InterruptHandling {
  /** Aborted at the first signal. */
  readonly signal: AbortSignal;
  /** True once the terminal hung up (SIGHUP). */
  readonly hungUp: () => boolean;
  /** Removes the handlers. */
  dispose(): void;
}

/**
 * Turns the first stop signal into an aborted signal, so the running command can end its step,
 * keep what did not land and bring the user's checkout up to date. Later signals only say that
 * it is stopping; after a few more it quits at once (exit 130), as a person pressing Ctrl-C
 * repeatedly means.
 */
export function handleInterrupts(stderr: (text: string) => void, exit: (code: number) => void): InterruptHandling {
  const controller = new AbortController();
  let received = 0;
  let hungUp = false;
  // After a hang-up there is no terminal to write to, and a failed write must not stop the
  // stopping: the abort comes first and every notice is best effort.
  const say = (text: string) => {
    try {
      stderr(text);
    } catch {
      // The terminal is gone.
    }
  };
  const onSignal = (name: string) => {
    received += 1;
    if (name === 'SIGHUP') hungUp = true;
    if (received === 1) {
      controller.abort();
      say(`colony: ${name}: stopping after the current step (press Ctrl-C ${SIGNALS_TO_FORCE} more times to quit at once)\n`);
      return;
    }
    const left = SIGNALS_TO_FORCE + 1 - received;
    if (left > 0) {
      say(`colony: still stopping; ${left} more to quit at once\n`);
      return;
    }
    say('colony: quitting at once; work that did not land stays in its workspace, and the next run repairs your checkout\n');
    exit(130);
  };
  for (const name of STOP_SIGNALS) process.on(name, onSignal);
  return {
    signal: controller.signal,
    hungUp: () => hungUp,
    dispose: () => {
      for (const name of STOP_SIGNALS) process.off(name, onSignal);
    },
  };
}
