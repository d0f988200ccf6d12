import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const COLONY = fileURLToPath(new URL('../../bin/colony.js', import.meta.url));

/** A real terminal: a tmux session on a server of its own, driven by keys and read by capturing its pane. */
export interface TmuxTerminal {
  /** Sends tmux key names (`Enter`, `Escape`, `j`) or, with `literal`, text typed as is. */
  keys(keys: readonly string[], literal?: boolean): void;
  /** What the pane shows now, one string per line; with `escapes`, with the colours and styles it is drawn in. */
  screen(escapes?: boolean): string;
  /** Everything the pane printed, the lines scrolled out of view (tmux keeps 2,000) and then the screen. */
  printed(): string;
  /** Waits until the pane shows `text`; fails with the pane in the message. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<string>;
  close(): void;
}

/**
 * Starts `colony <args>` in a new tmux session of `columns` x `rows`. The environment is built
 * from nothing, plus `env`: a terminal UI that believes it runs under CI draws only its last frame.
 */
export function openColonyInTmux(args: readonly string[], cwd: string, size = { columns: 160, rows: 48 }, env: Readonly<Record<string, string>> = {}): TmuxTerminal {
  const socket = `colony-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const tmux = (...tmuxArgs: string[]) => execFileSync('tmux', ['-L', socket, ...tmuxArgs], { encoding: 'utf8' });
  const quoted = [process.execPath, COLONY, ...args].map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(' ');
  const quote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;
  const extra = Object.entries(env).map(([name, value]) => ` ${name}=${quote(value)}`).join('');
  const environment = `env -i PATH='${process.env.PATH ?? ''}' HOME='${process.env.HOME ?? '/root'}' TERM=xterm-256color LANG=C.UTF-8${extra}`;
  // The pane stays after colony exits, so what it printed last can still be read.
  tmux('new-session', '-d', '-s', 'colony', '-x', String(size.columns), '-y', String(size.rows), '-c', cwd, `${environment} ${quoted}; sleep 600`);
  const screen = (escapes = false) => tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', 'colony');
  return {
    keys(keys, literal = false) {
      tmux('send-keys', '-t', 'colony', ...(literal ? ['-l'] : []), ...keys);
    },
    screen,
    printed: () => tmux('capture-pane', '-p', '-S', '-', '-t', 'colony'),
    async waitFor(text, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const shown = screen();
        if (typeof text === 'string' ? shown.includes(text) : text.test(shown)) return shown;
        if (Date.now() > deadline) throw new Error(`the terminal did not show ${String(text)} within ${timeoutMs} ms; it shows:\n${shown}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    close() {
      try {
        tmux('kill-server');
      } catch {
        // Already gone.
      }
    },
  };
}
