import { describe, expect, it } from 'vitest';
import { findProcesses, uniqueSleepSeconds } from '../../src/sandbox/testing/process-runner.conformance.js';
import { confinedTestsUnavailable, processesOf, TEST_LIMITS } from '../../src/sandbox/testing/confined-test-support.js';
import { toolText, useShellSandbox } from './shell-support.js';
import type { ConfinedMethod } from './shell-support.js';

for (const [method, uidBase] of [['bubblewrap', 2_000_005_000], ['unshare', 2_000_005_500]] as [ConfinedMethod, number][]) {
  const unavailable = confinedTestsUnavailable(method);
  describe.skipIf(unavailable !== null)(`shell adversary, processes, ${method}${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
    const setup = useShellSandbox({ method, runId: `adversarial-processes-${method}`, uidBase });

    it('bounds a fork bomb by the process limit, keeps the harness responsive, and runs the next command', async () => {
      let ticks = 0;
      let most = 0;
      const timer = setInterval(() => {
        ticks += 1;
        most = Math.max(most, processesOf(setup.a.uid).length);
      }, 50);
      // The sleep keeps the command alive: a command ends with its shell, and the bomb with it.
      const bomb = await setup.a.run(':(){ :|:& };:; sleep 5', { timeoutMs: 3_000 });
      clearInterval(timer);
      expect(bomb.timedOut).toBe(true);
      expect(bomb.output).toMatch(/fork: (retry: )?Resource temporarily unavailable/);
      expect(most).toBeGreaterThan(10);
      expect(most).toBeLessThanOrEqual(TEST_LIMITS.maxProcesses ?? 0);
      // The event loop was never starved: the timer kept firing while the bomb ran.
      expect(ticks).toBeGreaterThan(10);
      const next = await setup.a.run('echo still here');
      expect(next.exitCode).toBe(0);
      expect(next.output).toBe('still here\n');
    }, 20_000);

    it('kills a command that ignores SIGTERM at its timeout', async () => {
      const result = await setup.a.run("trap '' TERM; sleep 100", { timeoutMs: 1_000 });
      expect(result.timedOut).toBe(true);
      expect(result.signal).toBe('SIGKILL');
      expect(toolText(await setup.a.tool({ command: "trap '' TERM; sleep 100", timeout_seconds: 1 }))).toBe('timed out after 1s: the command was killed\n\n');
    }, 15_000);

    it('leaves nothing of setsid, nohup or a double fork behind', async () => {
      const seconds = [uniqueSleepSeconds(), uniqueSleepSeconds(), uniqueSleepSeconds()];
      const command = [
        `setsid sleep ${seconds[0]} &`,
        `nohup sleep ${seconds[1]} > /dev/null 2>&1 &`,
        `(setsid sh -c 'sleep ${seconds[2]} &' &)`,
        `until pgrep -f 'sleep ${seconds[2]}' > /dev/null && pgrep -f 'sleep ${seconds[0]}' > /dev/null; do sleep 0.01; done`,
        'echo detached',
      ].join('\n');
      const result = await setup.a.run(command);
      expect(result.exitCode).toBe(0);
      expect(result.output).toBe('detached\n');
      for (const each of seconds) expect(findProcesses(['sleep', each])).toEqual([]);
    });

    it('returns at once from a command that leaves a child in the background', async () => {
      const result = await setup.a.run('sleep 100 & echo hi', { timeoutMs: 20_000 });
      expect(result.exitCode).toBe(0);
      expect(result.timedOut).toBe(false);
      expect(result.output).toBe('hi\n');
    });

    it('gives a command that reads stdin an immediate end of file', async () => {
      const result = await setup.a.run('cat; echo "eof"', { timeoutMs: 20_000 });
      expect(result.exitCode).toBe(0);
      expect(result.output).toBe('eof\n');
    });

    it('cannot see or signal the harness’s processes', async () => {
      const result = await setup.a.run(`ps -e -o pid= | wc -l; kill -0 ${process.pid} 2>&1; echo "kill exit $?"`);
      // Its own pid namespace holds only the command (and the namespace's first process).
      expect(Number(result.output.split('\n')[0])).toBeLessThan(6);
      expect(result.output).toMatch(/kill exit 1/);
    });
  });
}
