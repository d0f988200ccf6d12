import { render } from 'ink';
import { createElement } from 'react';
import { TuiApp, type TuiAppProps } from '../ui/tui/app.js';

/** The terminal a UI draws on: both ends must be a TTY. */
export interface Terminal {
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
}

/** At most this many frames a second, whatever the log does: drawing must never starve the run. */
const MAX_FPS = 8;

/**
 * Shows the terminal UI until the user quits or `until` settles (the run it watches ended).
 * Returns a function that takes it down early; the promise settles once it is gone.
 */
export function showTerminalUi(terminal: Terminal, props: TuiAppProps, options: { readonly exitOnCtrlC: boolean }): { readonly closed: Promise<void>; close(): void } {
  const instance = render(createElement(TuiApp, props), {
    stdin: terminal.stdin,
    stdout: terminal.stdout,
    exitOnCtrlC: options.exitOnCtrlC,
    patchConsole: false,
    maxFps: MAX_FPS,
  });
  const closed = instance.waitUntilExit().then(
    () => undefined,
    () => undefined,
  );
  return {
    closed,
    close: () => instance.unmount(),
  };
}
