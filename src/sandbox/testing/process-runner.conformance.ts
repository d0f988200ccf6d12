import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessRequest, RunProcess } from '../process/types.js';

/**
 * True while `pid` is a live process. A zombie counts as dead: it has exited and only waits
 * to be reaped, which in a container may never happen.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state letter follows the parenthesised command name, which may itself hold spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * A `sleep` argument no other process uses, e.g. `61.483920`, so a test can find the sleep it
 * started by its command line: a pid printed inside a confined command is a pid of its own
 * namespace, meaningless outside it, while the command line is the same everywhere.
 */
export function uniqueSleepSeconds(): string {
  return `61.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
}

/** Live processes whose whole command line is `argv`. */
export function findProcesses(argv: readonly string[]): number[] {
  const wanted = `${argv.join('\0')}\0`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8') === wanted && isProcessAlive(Number(entry))) found.push(Number(entry));
    } catch {
      // It exited while the list was read.
    }
  }
  return found;
}

/** Waits until no live process has the command line `argv`. */
export async function waitUntilNoProcess(argv: readonly string[], deadlineMs = 5_000): Promise<boolean> {
  for (let waited = 0; waited < deadlineMs; waited += 20) {
    if (findProcesses(argv).length === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return findProcesses(argv).length === 0;
}

/**
 * Waits for `path` to exist. A command under test creates a marker file once it has reached
 * the state a test needs (a trap set, a child started), so the test acts on that handshake
 * rather than on a guess of how long starting takes.
 */
export async function waitUntilExists(path: string, deadlineMs = 10_000): Promise<boolean> {
  for (let waited = 0; waited < deadlineMs; waited += 10) {
    if (existsSync(path)) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return existsSync(path);
}

/** Polls `condition` every 10 ms until it holds or `deadlineMs` passes. */
async function waitFor(condition: () => boolean, deadlineMs = 10_000): Promise<boolean> {
  for (let waited = 0; waited < deadlineMs; waited += 10) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return condition();
}

/**
 * Starts a command through `start` and aborts it once the command has created `marker`. The
 * command must create the marker and then keep running until it is killed.
 */
export async function abortOnceReady<Result>(
  start: (signal: AbortSignal) => Promise<Result>,
  marker: string,
): Promise<{ readonly result: Result; readonly ready: boolean }> {
  const controller = new AbortController();
  const running = start(controller.signal);
  const ready = await waitUntilExists(marker);
  controller.abort();
  return { result: await running, ready };
}

export interface ConformanceSetup {
  /** Makes the fresh working directory usable by the runner's commands (e.g. group-writable for a sandbox uid). */
  readonly prepareWorkspace?: (cwd: string) => void;
}

/**
 * The behaviour every RunProcess implementation must show, as one suite: register it once per
 * implementation. `runnerFor` gets the suite's working directory, for runners confined to one. Timeouts are short so the suite stays fast; the kill grace is shortened too.
 * A timeout may land before the command has run a single line on a loaded machine, so the
 * timeout tests check only what holds wherever it lands; what a kill must do to a command that
 * is already running (keep its output, outlast a SIGTERM trap, reach its children) is checked
 * by aborting once the command reports it is ready, which kills the same way a timeout does.
 */
export function describeProcessRunnerConformance(name: string, runnerFor: (cwd: string) => RunProcess, setup: ConformanceSetup = {}): void {
  describe(`process runner conformance: ${name}`, () => {
    let cwd = '';
    let runner: RunProcess = async () => {
      throw new Error('the runner is made in beforeAll');
    };
    beforeAll(() => {
      cwd = mkdtempSync(join(tmpdir(), 'colony-runner-'));
      setup.prepareWorkspace?.(cwd);
      runner = runnerFor(cwd);
    });
    afterAll(() => {
      rmSync(cwd, { recursive: true, force: true });
    });
    const run = (command: string, extra: Partial<ProcessRequest> = {}) =>
      runner({ command, cwd, timeoutMs: 5_000, killGraceMs: 300, ...extra });

    it('runs a command in the working directory and reports its exit code', async () => {
      const result = await run('pwd; echo out; echo err >&2; exit 3');
      expect(result.startError).toBeNull();
      expect(result.exitCode).toBe(3);
      expect(result.signal).toBeNull();
      expect(result.timedOut).toBe(false);
      expect(result.output).toContain(cwd);
      expect(result.output).toContain('out\n');
      expect(result.output).toContain('err\n');
    });

    it('gives a command that reads stdin an immediate end of file', async () => {
      const result = await run('cat; echo "read done"');
      expect(result.timedOut).toBe(false);
      expect(result.exitCode).toBe(0);
      expect(result.output).toBe('read done\n');
    });

    it('kills a command at its timeout', async () => {
      const result = await run('sleep 60', { timeoutMs: 300 });
      expect(result.timedOut).toBe(true);
      expect(result.aborted).toBe(false);
      expect(result.exitCode).toBeNull();
      expect(result.signal).toBe('SIGTERM');
    });

    it('kills a command that ignores SIGTERM, and its children, once the grace runs out', async () => {
      const marker = join(cwd, 'trap-set');
      const sleeper = ['sleep', uniqueSleepSeconds()];
      const command = `trap '' TERM; ${sleeper.join(' ')} & touch trap-set; wait; wait; wait`;
      const controller = new AbortController();
      const running = run(command, { timeoutMs: 10_000, signal: controller.signal });
      const ready = (await waitUntilExists(marker)) && (await waitFor(() => findProcesses(sleeper).length > 0));
      controller.abort();
      const result = await running;
      expect(ready).toBe(true);
      expect(result.aborted).toBe(true);
      expect(result.signal).toBe('SIGKILL');
      expect(await waitUntilNoProcess(sleeper)).toBe(true);
    }, 15_000);

    it('does not wait for a background child, and kills it', async () => {
      const sleeper = ['sleep', uniqueSleepSeconds()];
      // The loop returns once the background sleep has started, so there is something to kill.
      const command = `${sleeper.join(' ')} & until grep -q ${sleeper[1]} /proc/$!/cmdline 2>/dev/null; do sleep 0.01; done; echo started`;
      const result = await run(command);
      expect(result.exitCode).toBe(0);
      expect(result.timedOut).toBe(false);
      expect(result.output).toBe('started\n');
      expect(await waitUntilNoProcess(sleeper)).toBe(true);
    }, 10_000);

    it('kills a running command when its AbortSignal fires, keeping what it printed', async () => {
      const marker = join(cwd, 'begun');
      const command = 'echo begun; touch begun; sleep 60';
      const { result, ready } = await abortOnceReady((signal) => run(command, { timeoutMs: 10_000, signal }), marker);
      expect(ready).toBe(true);
      expect(result.aborted).toBe(true);
      expect(result.timedOut).toBe(false);
      expect(result.exitCode).toBeNull();
      expect(result.signal).toBe('SIGTERM');
      expect(result.output).toBe('begun\n');
    }, 15_000);

    it('does not start a command whose AbortSignal has already fired', async () => {
      const marker = join(cwd, 'should-not-exist');
      const result = await run(`touch ${marker}`, { signal: AbortSignal.abort() });
      expect(result.aborted).toBe(true);
      expect(result.startError).toMatch(/cancelled/);
      expect(() => readFileSync(marker)).toThrow();
    });

    it('caps huge output, keeping the head and the tail', async () => {
      const result = await run('seq 1 100000', { maxOutputBytes: 4_096 });
      const fullLength = Array.from({ length: 100_000 }, (_, index) => `${index + 1}\n`).join('').length;
      expect(result.exitCode).toBe(0);
      expect(result.truncated).toBe(true);
      expect(result.outputBytes).toBe(fullLength);
      expect(result.output.startsWith('1\n2\n3\n')).toBe(true);
      expect(result.output.endsWith('99999\n100000\n')).toBe(true);
      expect(result.output).toMatch(/\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/);
    });

    it('splits the output budget evenly and counts the omitted bytes', async () => {
      const result = await run("head -c 3000 /dev/zero | tr '\\0' a; head -c 3000 /dev/zero | tr '\\0' b", {
        maxOutputBytes: 4_096,
      });
      expect(result.outputBytes).toBe(6_000);
      expect(result.output).toBe(`${'a'.repeat(2_048)}\n[... 1904 bytes omitted ...]\n${'b'.repeat(2_048)}`);
    });

    it('renders binary output safely', async () => {
      const result = await run("printf 'a\\000b\\377\\376c\\033[31md\\n'");
      expect(result.exitCode).toBe(0);
      expect(result.output).not.toContain('\u0000');
      expect(result.output).not.toContain('\u001b');
      expect(result.output).toBe('a\uFFFDb\uFFFD\uFFFDcd\n');
    });

    it('reports a missing working directory as data', async () => {
      const result = await runner({ command: 'true', cwd: join(cwd, 'missing'), timeoutMs: 1_000 });
      expect(result.exitCode).toBeNull();
      expect(result.startError).toMatch(/working directory does not exist/);
    });

    it('reports impossible limits as data', async () => {
      expect((await run('true', { timeoutMs: 0 })).startError).toMatch(/timeoutMs must be a positive number/);
      expect((await run('true', { maxOutputBytes: 1 })).startError).toMatch(/maxOutputBytes must be an integer/);
    });

    it('passes the caller’s variables and a fixed unattended environment', async () => {
      const result = await run('echo "$GREETING|$TERM|$CI|${NODE_OPTIONS-unset}"', { env: { GREETING: 'hello' } });
      expect(result.output).toBe('hello|dumb|1|unset\n');
    });
  });
}
