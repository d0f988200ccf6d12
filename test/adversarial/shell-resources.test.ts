import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { confinedTestsUnavailable, TEST_LIMITS } from '../../src/sandbox/testing/confined-test-support.js';
import { toolText, useShellSandbox } from './shell-support.js';
import type { ConfinedMethod } from './shell-support.js';

const ALLOCATE_FOREVER = 'node -e "const kept = []; for (;;) kept.push(Buffer.alloc(64 * 1024 * 1024, 1))"';

for (const [method, uidBase] of [['bubblewrap', 2_000_006_000], ['unshare', 2_000_006_500]] as [ConfinedMethod, number][]) {
  const unavailable = confinedTestsUnavailable(method);
  describe.skipIf(unavailable !== null)(`shell adversary, resources, ${method}${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
    const setup = useShellSandbox({ method, runId: `adversarial-resources-${method}`, uidBase });

    it('is killed for memory at the limit, and says so', async () => {
      const result = await setup.a.run(ALLOCATE_FOREVER, { timeoutMs: 20_000 });
      expect(result.outOfMemory).toBe(true);
      expect(result.signal).toBe('SIGKILL');
      expect(result.timedOut).toBe(false);
      expect(toolText(await setup.a.tool({ command: ALLOCATE_FOREVER, timeout_seconds: 20 }))).toMatch(
        /^out of memory: the command was killed at the 128 MB limit\n/,
      );
    }, 60_000);

    it('says when one process ran out of memory and the command went on', async () => {
      const output = toolText(await setup.a.tool({ command: `${ALLOCATE_FOREVER}; echo went on`, timeout_seconds: 20 }));
      expect(output).toMatch(/^exit code: 0\nout of memory: a process of the command was killed at the 128 MB limit\n\n/);
      expect(output).toContain('went on');
    }, 60_000);

    it('is stopped at the CPU time limit, and says so', async () => {
      const result = await setup.a.run('while :; do :; done', { timeoutMs: 20_000 });
      expect(result.cpuLimitExceeded).toBe(true);
      expect(result.signal).toBe('SIGXCPU');
      expect(result.outOfMemory).toBe(false);
      expect(toolText(await setup.a.tool({ command: 'while :; do :; done', timeout_seconds: 20 }))).toMatch(
        /^CPU time limit of 1 s reached: the command was killed\n/,
      );
    }, 60_000);

    it('cannot write a file past the file size limit', async () => {
      const result = await setup.a.run('head -c 5G /dev/zero > big', { timeoutMs: 20_000 });
      expect(result.fileTooLarge).toBe(true);
      expect(result.signal).toBe('SIGXFSZ');
      expect(statSync(join(setup.a.workspace, 'big')).size).toBe(TEST_LIMITS.maxFileBytes);
      expect(toolText(await setup.a.tool({ command: 'head -c 5G /dev/zero > big' }))).toMatch(/^file size limit of 10 MB reached: the command was killed\n/);
    }, 30_000);

    it('caps endless output and spills at most the spill limit, readable by the agent alone', async () => {
      const result = await setup.a.run('yes', { timeoutMs: 1_000 });
      expect(result.timedOut).toBe(true);
      expect(result.truncated).toBe(true);
      expect(result.output.length).toBeLessThan(70 * 1024);
      expect(result.spillPath).toMatch(/^\/tmp\/colony-output\/cmd-\d+\.log$/);
      expect(result.spillBytes).toBe(TEST_LIMITS.maxSpillBytes);
      const name = (result.spillPath ?? '').split('/').pop() ?? '';
      const host = join(setup.a.spillDir, name);
      expect(statSync(host).size).toBe(TEST_LIMITS.maxSpillBytes);
      expect(readFileSync(host, 'utf8').slice(0, 6)).toBe('y\ny\ny\n');
      const read = await setup.a.run(`wc -c < ${result.spillPath}; tail -c 4 ${result.spillPath}; echo more >> ${result.spillPath}; echo "append exit $?"`);
      expect(read.output).toMatch(new RegExp(`^${TEST_LIMITS.maxSpillBytes}\ny\ny\n`));
      expect(read.output).toContain('append exit 1');
      expect((await setup.b.run(`cat ${result.spillPath}`)).output).toMatch(/No such file or directory/);
    }, 20_000);

    it('keeps the harness’s secrets out of the environment', async () => {
      process.env.COLONY_ADVERSARIAL_API_KEY = 'sk-adversarial-do-not-leak';
      try {
        const result = await setup.a.run('env; cat /proc/1/environ 2>&1 | tr "\\0" "\\n"');
        expect(result.output).toContain('HOME=/tmp/home');
        expect(result.output).not.toContain('sk-adversarial-do-not-leak');
        expect(result.output).not.toContain('COLONY_ADVERSARIAL_API_KEY');
      } finally {
        delete process.env.COLONY_ADVERSARIAL_API_KEY;
      }
    });

    it('runs with no capabilities, no new privileges and fixed limits it cannot raise', async () => {
      const result = await setup.a.run(
        "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status; ulimit -Hn; ulimit -n 100000 2>/dev/null; echo \"raise exit $?\"; ulimit -c",
      );
      expect(result.output).toMatch(/^CapPrm:\s+0+$/m);
      expect(result.output).toMatch(/^CapEff:\s+0+$/m);
      expect(result.output).toMatch(/^CapBnd:\s+0+$/m);
      expect(result.output).toMatch(/^NoNewPrivs:\s+1$/m);
      expect(result.output).toMatch(/^1024$/m);
      expect(result.output).toContain('raise exit 1');
      expect(result.output.trim().endsWith('0')).toBe(true);
    });
  });
}
