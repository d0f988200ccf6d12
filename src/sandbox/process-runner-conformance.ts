import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessRequest, RunProcess } from './process-runner.js';

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
 * Waits for `pid` to be gone. A killed process closes its pipes a moment before the kernel
 * marks it exited, so a check right after the runner returns can still see it running.
 */
export async function waitUntilGone(pid: number, deadlineMs = 5_000): Promise<boolean> {
  for (let waited = 0; waited < deadlineMs; waited += 20) {
    if (!isProcessAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return !isProcessAlive(pid);
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

/**
 * The behaviour every RunProcess implementation must show, as one suite: register it once per
 * implementation. Timeouts are short so the suite stays fast; the kill grace is shortened too.
 * A timeout may land before the command has run a single line on a loaded machine, so the
 * timeout tests check only what holds wherever it lands; what a kill must do to a command that
 * is already running (keep its output, outlast a SIGTERM trap, reach its children) is checked
 * by aborting once the command reports it is ready, which kills the same way a timeout does.
 */
export function describeProcessRunnerConformance(name: string, runner: RunProcess): void {
  describe(`process runner conformance: ${name}`, () => {
    let cwd = '';
    beforeAll(() => {
      cwd = mkdtempSync(join(tmpdir(), 'colony-runner-'));
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
      const command = "trap '' TERM; sleep 60 & echo $!; touch trap-set; wait; wait; wait";
      const { result, ready } = await abortOnceReady((signal) => run(command, { timeoutMs: 10_000, signal }), marker);
      expect(ready).toBe(true);
      expect(result.aborted).toBe(true);
      expect(result.signal).toBe('SIGKILL');
      const sleeper = Number(result.output.trim());
      expect(sleeper).toBeGreaterThan(0);
      expect(await waitUntilGone(sleeper)).toBe(true);
    }, 15_000);

    it('does not wait for a background child, and kills it', async () => {
      const result = await run('sleep 60 & echo $!');
      expect(result.exitCode).toBe(0);
      expect(result.timedOut).toBe(false);
      const sleeper = Number(result.output.trim());
      expect(sleeper).toBeGreaterThan(0);
      expect(await waitUntilGone(sleeper)).toBe(true);
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
