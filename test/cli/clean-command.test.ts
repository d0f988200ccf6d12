import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, sep } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteEventStore } from '../../src/store/sqlite/sqlite-event-store.js';
import { probeOverlaySupport } from '../../src/workspace/providers/overlay/overlay-probe.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { startColonyProcess, waitForLoggedEvent } from '../testing/colony-process.js';
import { RUNS_UNAVAILABLE } from '../testing/runs-need-sandbox.js';

const RUN_TIMEOUT_MS = 300_000;
const MODEL = 'sim?seed=4&latency=20..60';
/** Slow enough that workers are still at work after the first landing and the two refused cleans: the stop must find some. */
const MIDWAY_MODEL = 'sim?seed=4&latency=300..600';
const overlay = await probeOverlaySupport(tmpdir());

let repo: ExampleRepository;
let stateDir: string;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
  // Named, not the default: these tests are about what is in it, wherever runs keep it by default.
  stateDir = join(repo.dir, '.colony-state');
});

afterEach(() => {
  repo.cleanup();
});

/** The overlay mounts at or under `dir`, read as the kernel lists them for this process. */
function mountsUnder(dir: string): string[] {
  const real = existsSync(dir) ? realpathSync(dir) : dir;
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => line.includes(' - overlay '))
    .map((line) => line.split(' ')[4] ?? '')
    .filter((mountPoint) => mountPoint === real || mountPoint.startsWith(`${real}${sep}`));
}

function worktrees(): string[] {
  return repo
    .git('worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '));
}

function salvageRefs(): string[] {
  return repo.git('for-each-ref', '--format=%(refname)', 'refs/colony/salvaged/').split('\n').filter((line) => line !== '');
}

/** Starts `colony run` with overlay workspaces as a process of its own and stops it with SIGTERM once a merge landed. */
async function stopARunMidway(): Promise<{ readonly pid: number }> {
  const started = startColonyProcess(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--state', stateDir, '--model', MIDWAY_MODEL, '--workers', '3', '--workspaces', 'overlay', '--quiet'], repo.dir);
  await waitForLoggedEvent(stateDir, (event) => event.type === 'merge.landed', 120_000);
  const pid = started.child.pid ?? -1;
  const live = await runCli(['clean', '--repo', repo.dir, '--state', stateDir]);
  expect(live.code).toBe(1);
  expect(live.stderr).toContain(`colony clean touches nothing a live run uses: another colony run (process ${pid}`);
  const salvage = await runCli(['clean', '--salvage', '--repo', repo.dir, '--state', stateDir]);
  expect(salvage.code).toBe(1);
  expect(salvage.stderr).toContain('colony clean touches nothing a live run uses');
  started.child.kill('SIGTERM');
  const ended = await started.ended;
  expect(ended.code, ended.stderr).toBe(1);
  expect(ended.stdout).toContain('The run was stopped');
  return { pid };
}

describe.skipIf(RUNS_UNAVAILABLE !== null || !overlay.ok)('colony clean, with overlay workspaces', () => {
  it('refuses a live run; keeps a stopped run for resume; with --stopped leaves no mount, workspace or worktree record and nothing to resume; --salvage prunes the salvaged work', async () => {
    await stopARunMidway();
    // What the stop kept for `colony resume`: the workers' overlays, still mounted.
    const kept = mountsUnder(stateDir);
    expect(kept.length).toBeGreaterThan(0);

    const plain = await runCli(['clean', '--repo', repo.dir, '--state', stateDir]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('Kept for colony resume: the workspaces and spill files of the unfinished run');
    expect(mountsUnder(stateDir)).toEqual(kept);

    // Work a stopped worker had not committed yet, which must not be lost with its workspace.
    const unsaved = kept[0] ?? '';
    writeFileSync(join(unsaved, 'unsaved.txt'), 'work in progress\n');

    const stopped = await runCli(['clean', '--stopped', '--repo', repo.dir, '--state', stateDir, '--json']);
    expect(stopped.code, stopped.stderr).toBe(0);
    const report = JSON.parse(stopped.stdout) as { mounts: number; workspaces: number; worktreeRecords: number; bytes: number; abandoned: string | null; problems: string[] };
    expect(report).toMatchObject({ mounts: kept.length, problems: [] });
    expect(report.workspaces).toBeGreaterThanOrEqual(kept.length);
    expect(report.worktreeRecords).toBeGreaterThanOrEqual(kept.length);
    expect(report.bytes).toBeGreaterThan(0);
    expect(report.abandoned).toMatch(/^run-/);
    expect(mountsUnder(stateDir)).toEqual([]);
    expect(readdirSync(join(stateDir, 'workspaces')).filter((name) => !name.startsWith('.'))).toEqual([]);
    expect(worktrees()).toEqual([`worktree ${repo.dir}`]);
    expect(repo.git('branch', '--list', 'colony/worker-*')).toBe('');
    // The record of runs stays.
    expect(existsSync(join(stateDir, 'colony.db'))).toBe(true);

    const resumed = await runCli(['resume', '--repo', repo.dir, '--state', stateDir]);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain('there is no run to resume');
    expect(resumed.stderr).toContain('its last run ended');

    // The stopped workers' unlanded work was salvaged, not lost; --salvage lets it go.
    const salvaged = salvageRefs();
    expect(salvaged).toContain(`refs/colony/salvaged/${basename(unsaved)}`);
    expect(repo.git('show', '--format=', '--name-only', `refs/colony/salvaged/${basename(unsaved)}`)).toContain('unsaved.txt');
    const pruned = await runCli(['clean', '--salvage', '--repo', repo.dir, '--state', stateDir]);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toContain(`${salvaged.length} salvage ref${salvaged.length === 1 ? '' : 's'} pruned`);
    expect(pruned.stdout).toContain(`Pruned ${salvaged.join(', ')}.`);
    expect(salvageRefs()).toEqual([]);
    expect(repo.git('branch', '--list', 'colony/worker-*')).toBe('');

    const again = await runCli(['clean', '--repo', repo.dir, '--state', stateDir]);
    expect(again.stdout).toBe(`Nothing to clean in ${stateDir}.\n`);
  }, RUN_TIMEOUT_MS);

  it('moves a damaged state directory aside with its mounts taken down, and the next run --new ends done leaving no mount', async () => {
    await stopARunMidway();
    expect(mountsUnder(stateDir).length).toBeGreaterThan(0);
    const database = join(stateDir, 'colony.db');
    truncateSync(database, 1_000);

    const plain = await runCli(['clean', '--repo', repo.dir, '--state', stateDir]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain(`${database} is damaged`);
    expect(plain.stderr).toContain(`run: colony clean --damaged --state ${stateDir} `);
    expect(mountsUnder(stateDir).length).toBeGreaterThan(0);

    const moved = await runCli(['clean', '--damaged', '--repo', repo.dir, '--state', stateDir]);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain(`Moved the damaged state directory ${stateDir} aside to ${stateDir}.damaged, kept as it was and out of git status`);
    expect(mountsUnder(stateDir)).toEqual([]);
    expect(mountsUnder(`${stateDir}.damaged`)).toEqual([]);
    expect(worktrees()).toEqual([`worktree ${repo.dir}`]);
    expect(repo.git('branch', '--list', 'colony/worker-*')).toBe('');

    const fresh = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--state', stateDir, '--model', MODEL, '--workers', '3', '--workspaces', 'overlay', '--new', '--json']);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(JSON.parse(fresh.stdout)).toMatchObject({ status: 'done' });
    expect(mountsUnder(stateDir)).toEqual([]);
    expect(statSync(join(`${stateDir}.damaged`, 'colony.db')).size).toBe(1_000);
    expect(repo.git('status', '--porcelain')).toBe('');
  }, RUN_TIMEOUT_MS);
});

describe('colony clean, flags', () => {
  it('says --damaged goes alone, with exit 2', async () => {
    const result = await runCli(['clean', '--damaged', '--stopped', '--repo', repo.dir, '--state', stateDir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--damaged moves the whole state directory aside and cleans nothing else in it.');
    expect(result.stderr).toContain('Run colony clean --damaged alone');
  });

  it('says there is nothing to clean where no state directory is, and makes none', async () => {
    const result = await runCli(['clean', '--repo', repo.dir, '--state', stateDir]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`Nothing to clean: there is no state directory at ${stateDir}.\n`);
    expect(existsSync(stateDir)).toBe(false);
  });

  it('refuses --damaged where there is no state directory or its store is sound, saying what to do instead', async () => {
    const none = await runCli(['clean', '--damaged', '--repo', repo.dir, '--state', stateDir]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`there is no state directory at ${stateDir} to move aside`);
    mkdirSync(stateDir);
    await openSqliteEventStore(join(stateDir, 'colony.db')).close();
    const sound = await runCli(['clean', '--damaged', '--repo', repo.dir, '--state', stateDir]);
    expect(sound.code).toBe(2);
    expect(sound.stderr).toContain(`the store in ${stateDir} is not damaged: there is nothing to move aside. Run colony clean without --damaged.`);
    expect(existsSync(stateDir)).toBe(true);
  });
});
