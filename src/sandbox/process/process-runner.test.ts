import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeProcessRunnerConformance, isProcessAlive } from '../testing/process-runner.conformance.js';
import { createLocalProcessRunner, runProcess } from './process-runner.js';

describeProcessRunnerConformance('local', () => runProcess);

describe('local process runner', () => {
  let cwd = '';
  const started: number[] = [];
  beforeAll(() => {
    cwd = mkdtempSync(join(tmpdir(), 'colony-local-runner-'));
  });
  afterEach(() => {
    for (const pid of started.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
  afterAll(() => {
    rmSync(cwd, { recursive: true, force: true });
  });

  it('never shows a secret from process.env to the command', async () => {
    process.env.COLONY_TEST_SECRET_API_KEY = 'sk-test-do-not-leak-4242';
    try {
      const result = await runProcess({ command: 'env', cwd, timeoutMs: 5_000 });
      expect(result.exitCode).toBe(0);
      expect(result.output).toContain('PATH=');
      expect(result.output).not.toContain('sk-test-do-not-leak-4242');
      expect(result.output).not.toContain('COLONY_TEST_SECRET_API_KEY');
      expect(result.output).not.toMatch(/^NODE_OPTIONS=/m);
    } finally {
      delete process.env.COLONY_TEST_SECRET_API_KEY;
    }
  });

  it('reads allowlisted variables from the parent environment it is given', async () => {
    const runner = createLocalProcessRunner({
      parentEnvironment: { PATH: process.env.PATH, HOME: '/home/somebody', OPENAI_API_KEY: 'sk-secret' },
    });
    const result = await runner({ command: 'echo "$HOME|${OPENAI_API_KEY-absent}"', cwd, timeoutMs: 5_000 });
    expect(result.output).toBe('/home/somebody|absent\n');
  });

  it('stops waiting for pipes held by a process that left the group', async () => {
    // The loop waits until the child has left the group, so the sweep cannot catch it first.
    const command = "setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' & until [ -s escaped.pid ]; do sleep 0.05; done; cat escaped.pid";
    const result = await runProcess({ command, cwd, timeoutMs: 5_000, drainMs: 100 });
    const escaped = Number(result.output.trim());
    if (escaped > 0) started.push(escaped);
    expect(result.exitCode).toBe(0);
    expect(escaped).toBeGreaterThan(0);
    expect(isProcessAlive(escaped)).toBe(true);
  }, 10_000);

  it('reports a command that cannot be passed to bash as data', async () => {
    const result = await runProcess({ command: 'echo a\u0000b', cwd, timeoutMs: 1_000 });
    expect(result.exitCode).toBeNull();
    expect(result.startError).toMatch(/could not start bash/);
  });

  it('measures duration with the clock it is given', async () => {
    let tick = 0;
    const runner = createLocalProcessRunner({ now: () => (tick += 1000) });
    const result = await runner({ command: 'true', cwd, timeoutMs: 5_000 });
    expect(result.durationMs).toBe(1000);
  });
});
