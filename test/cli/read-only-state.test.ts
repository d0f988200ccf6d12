import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { startColonyProcess, waitForLoggedEvent } from '../testing/colony-process.js';
import { keepModules } from '../testing/small-goal.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

const RUN_TIMEOUT_MS = 300_000;

let repo: ExampleRepository;
let stateDir: string;
/** Where the state directory is seen read-only, through a read-only bind mount of it. */
let view: string;
let mounted = false;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
  keepModules(repo, ['src/strings/truncate.js', 'src/strings/case.js']);
  stateDir = defaultStateDir(repo.dir);
  view = mkdtempSync(join(tmpdir(), 'colony-read-only-view-'));
});

afterEach(() => {
  unmountView();
  rmSync(view, { recursive: true, force: true });
  repo.cleanup();
});

function mountView(): void {
  execFileSync('mount', ['--bind', stateDir, view]);
  mounted = true;
  execFileSync('mount', ['-o', 'remount,bind,ro', view]);
}

function unmountView(): void {
  if (mounted) execFileSync('umount', [view]);
  mounted = false;
}

async function statusThroughView(): Promise<{ run: { state: string } }> {
  const result = await runCli(['status', '--state', view, '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { run: { state: string } };
}

const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describeRuns('a read-only state directory', () => {
  it('is read by status, events and analyze as it was left, and nothing in it is written', async () => {
    const done = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '2', '--quiet']);
    expect(done.code, done.stderr).toBe(0);
    const files = readdirSync(stateDir).sort();
    const before = digest(join(stateDir, 'colony.db'));
    mountView();

    expect((await statusThroughView()).run.state).toBe('done');
    const events = await runCli(['events', '--state', view, '--type', 'merge.landed']);
    expect(events.code, events.stderr).toBe(0);
    expect(events.stdout.trim().split('\n')).toHaveLength(2);
    const analysis = await runCli(['analyze', '--state', view]);
    expect(analysis.code, analysis.stderr).toBe(0);
    expect(analysis.stdout).toMatch(/^Run run-\S+: \d+ events analysed/);

    unmountView();
    expect(readdirSync(stateDir).sort()).toEqual(files);
    expect(digest(join(stateDir, 'colony.db'))).toBe(before);
  }, RUN_TIMEOUT_MS);

  it('shows a run going on in another process as running, and one killed as interrupted', async () => {
    const running = startColonyProcess(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim?latency=800..1200', '--workers', '2', '--quiet'], repo.dir);
    await waitForLoggedEvent(stateDir, (event) => event.type === 'task.claimed' && event.data.kind === 'worker');
    mountView();
    expect((await statusThroughView()).run.state).toBe('running');

    running.child.kill('SIGKILL');
    await running.ended;
    // The killed run left its write-ahead log, with the events it flushed last, and its lock's holder file.
    expect((await statusThroughView()).run.state).toBe('interrupted');
    unmountView();
    const written = await runCli(['status', '--state', stateDir, '--json']);
    expect(JSON.parse(written.stdout)).toMatchObject({ run: { state: 'interrupted' } });
  }, RUN_TIMEOUT_MS);
});
