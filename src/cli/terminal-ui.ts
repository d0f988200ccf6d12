import { render } from 'ink';
import { createElement } from 'react';
import { TuiApp, type TuiAppProps } from '../ui/tui/app.js';
import { ColorsContext } from '../ui/tui/colors.js';

/** The terminal a UI draws on: both ends must be a TTY. */
export interface Terminal {
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
}

/** At most this many frames a second, whatever the log does: drawing must never starve the run. */
const MAX_FPS = 8;

/**
 * Shows the terminal UI until the user quits, `close` is called, or `signal` aborts (the
 * terminal hung up, or colony was told to stop); `closed` settles once it is gone.
 */
export function showTerminalUi(
  terminal: Terminal,
  props: TuiAppProps,
  options: {
    readonly exitOnCtrlC: boolean;
    /** False draws without colours (NO_COLOR, `--no-color`). */
    readonly color: boolean;
    /** Takes the UI down when aborted: the terminal hung up, or colony was told to stop. */
    readonly signal?: AbortSignal;
  },
): { readonly closed: Promise<void>; close(): void } {
  const instance = render(createElement(ColorsContext.Provider, { value: options.color }, createElement(TuiApp, props)), {
    stdin: terminal.stdin,
    stdout: terminal.stdout,
    exitOnCtrlC: options.exitOnCtrlC,
    patchConsole: false,
    maxFps: MAX_FPS,
  });
  const close = () => instance.unmount();
  options.signal?.addEventListener('abort', close, { once: true });
  const closed = instance.waitUntilExit().then(
    () => undefined,
    () => undefined,
  );
  void closed.then(() => options.signal?.removeEventListener('abort', close));
  return { closed, close };
}
