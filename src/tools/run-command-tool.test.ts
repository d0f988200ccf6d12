import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { abortOnceReady } from '../sandbox/testing/process-runner.conformance.js';
import { createLocalProcessRunner, runProcess } from '../sandbox/process/process-runner.js';
import { SpillDirectory } from '../sandbox/process/spill-directory.js';
import type { ProcessRequest, RunProcess } from '../sandbox/process/types.js';
import { createRunCommandTool } from './run-command-tool.js';
import type { RunCommandInput } from './run-command-tool.js';
import { createWorkspaceFixture, toolContext } from './testing/workspace-fixture.js';
import type { WorkspaceFixture } from './testing/workspace-fixture.js';

describe('run_command', () => {
  let fixture: WorkspaceFixture;
  let requests: ProcessRequest[];
  /** The local runner, recording what the tool asks of it. */
  const recordingRunner: RunProcess = (request) => {
    requests.push(request);
    return runProcess(request);
  };
  const run = (input: RunCommandInput, signal?: AbortSignal) =>
    createRunCommandTool(fixture.root, { runProcess: recordingRunner, environment: { GIT_AUTHOR_NAME: 'worker' } }).execute(
      input,
      toolContext(signal),
    );

  beforeEach(() => {
    fixture = createWorkspaceFixture();
    requests = [];
  });
  afterEach(() => fixture.remove());

  it('runs in the workspace root and reports the exit code, then the output', async () => {
    const result = await run({ command: 'cat src/main.ts; echo "$GIT_AUTHOR_NAME"; echo oops >&2' });
    expect(result).toEqual({ ok: true, output: 'exit code: 0\n\nexport const answer = 42;\nworker\noops\n' });
  });

  it('passes on the CPU the command used where its runner counted it', async () => {
    const counting: RunProcess = async (request) => ({ ...(await runProcess(request)), cpuMs: 812.25 });
    const result = await createRunCommandTool(fixture.root, { runProcess: counting }).execute({ command: 'echo counted' }, toolContext());
    expect(result).toEqual({ ok: true, output: 'exit code: 0\n\ncounted\n', cpuMs: 812.25 });
  });

  it('treats a non-zero exit as information, not a failure', async () => {
    expect(await run({ command: 'echo failing test; exit 1' })).toEqual({ ok: true, output: 'exit code: 1\n\nfailing test\n' });
  });

  it('returns at once for a command that reads stdin', async () => {
    expect(await run({ command: 'cat', timeout_seconds: 5 })).toEqual({ ok: true, output: 'exit code: 0\n\n' });
  });

  it('kills a command at its timeout and says so', async () => {
    // No output: the timeout may land before bash has run a line, and the result must not depend on it.
    const result = await run({ command: 'sleep 60', timeout_seconds: 1 });
    expect(result).toEqual({ ok: true, output: 'timed out after 1s: the command was killed\n\n' });
    expect(requests.map((request) => request.timeoutMs)).toEqual([1_000]);
  });

  it('does not wait for a background child', async () => {
    const result = await run({ command: 'sleep 30 & echo started' });
    expect(result).toEqual({ ok: true, output: 'exit code: 0\n\nstarted\n' });
  }, 10_000);

  it('is killed when the call is aborted, keeping what the command printed', async () => {
    const command = 'echo waiting; touch ready; sleep 60';
    const { result, ready } = await abortOnceReady((signal) => run({ command }, signal), join(fixture.root, 'ready'));
    expect(ready).toBe(true);
    expect(result).toEqual({ ok: true, output: 'killed by signal SIGTERM\n\nwaiting\n' });
  }, 15_000);

  it('caps huge output, keeping the head and the tail', async () => {
    const result = await run({ command: 'seq 1 200000' });
    const output = result.ok ? result.output : '';
    expect(output.startsWith('exit code: 0\noutput truncated: 1.2 MB in all, only the start and the end are shown\n\n1\n2\n3\n')).toBe(true);
    expect(output.endsWith('199999\n200000\n')).toBe(true);
    expect(output).toMatch(/\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/);
    expect(output.length).toBeLessThan(70 * 1024);
  });

  it('says where the full output is when the runner spilled it', async () => {
    const spill = SpillDirectory.open({ hostDirectory: join(fixture.root, 'spill'), visibleDirectory: join(fixture.root, 'spill'), owner: null, maxBytes: 200_000 });
    if (!spill.ok) throw new Error(spill.error);
    const tool = createRunCommandTool(fixture.root, { runProcess: createLocalProcessRunner({ spill: spill.directory }) });
    const whole = await tool.execute({ command: 'seq 1 20000' }, toolContext());
    const path = join(fixture.root, 'spill', 'cmd-1.log');
    expect(whole.ok && whole.output.split('\n').slice(0, 2)).toEqual(['exit code: 0', `output truncated: 106 KB in all, full output in ${path}`]);
    expect(readFileSync(path, 'utf8')).toBe(Array.from({ length: 20_000 }, (_, index) => `${index + 1}\n`).join(''));
    const cut = await tool.execute({ command: 'seq 1 40000' }, toolContext());
    expect(cut.ok && cut.output.split('\n')[1]).toBe(`output truncated: 224 KB in all, the first 195 KB in ${join(fixture.root, 'spill', 'cmd-2.log')}`);
  });

  it('renders binary output safely', async () => {
    writeFileSync(join(fixture.root, 'blob.bin'), Buffer.from([0x00, 0xff, 0x41, 0x0a]));
    expect(await run({ command: 'cat blob.bin' })).toEqual({ ok: true, output: 'exit code: 0\n\n\uFFFD\uFFFDA\n' });
  });

  it('keeps secrets from the parent environment away from the command', async () => {
    process.env.COLONY_RUN_COMMAND_TEST_API_KEY = 'sk-run-command-secret';
    try {
      const result = await createRunCommandTool(fixture.root).execute({ command: 'env' }, toolContext());
      expect(result.ok && result.output.startsWith('exit code: 0\n\n')).toBe(true);
      expect(result.ok && result.output).not.toContain('sk-run-command-secret');
    } finally {
      delete process.env.COLONY_RUN_COMMAND_TEST_API_KEY;
    }
  });

  it('is an error only when the command could not start', async () => {
    fixture.remove();
    const result = await run({ command: 'true' });
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/^could not run the command: the working directory does not exist/) });
  });

  it('rejects a timeout over the maximum in its parameters', () => {
    const tool = createRunCommandTool('/tmp');
    expect(tool.parameters.safeParse({ command: 'true', timeout_seconds: 1801 }).success).toBe(false);
    expect(tool.parameters.safeParse({ command: 'true', timeout_seconds: 1800 }).success).toBe(true);
    expect(readFileSync(new URL('./descriptions/run-command.md', import.meta.url), 'utf8')).toBe(tool.description);
  });
});
