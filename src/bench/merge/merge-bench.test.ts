import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runGit } from '../../workspace/git/git.js';
import { checkLanded } from './landed-check.js';
import { runMergeBench } from './merge-bench.js';
import type { MergeBenchOptions, MergeBenchResult } from './merge-bench.js';
import { SHARED_FILE, SHARED_HEADER, planChange } from './planned-change.js';
import type { PlannedChange } from './planned-change.js';
import { createScratchRepository } from './scratch-repository.js';
import { mergerSeed, seededRandom } from './seeded-random.js';

const SHORT_RUN: MergeBenchOptions = {
  mode: 'self-merge',
  mergers: 4,
  shared: 0.5,
  insertShare: 0,
  seconds: 3,
  resolveMs: 50,
  seed: 1,
  files: 100,
};

function succeeded(result: MergeBenchResult): Extract<MergeBenchResult, { ok: true }> {
  if (!result.ok) throw new Error(`expected the run to work, got: ${result.error}`);
  return result;
}

/** Each merger's first change with SHORT_RUN's seed: they all start from the same main, so two appends among them must meet. */
function firstChanges(options: MergeBenchOptions): PlannedChange['kind'][] {
  return Array.from({ length: options.mergers }, (_, merger) => planChange(seededRandom(mergerSeed(options.seed, merger)), merger, 1, options).kind);
}

describe('colony bench merge', { timeout: 90_000 }, () => {
  it('self-merge: lands changes, settles concurrent appends mechanically, and main holds each landed change once', async () => {
    expect(firstChanges(SHORT_RUN)).toEqual(['file', 'line', 'line', 'line']);
    const { figures, check } = succeeded(await runMergeBench(SHORT_RUN));
    expect(check).toEqual({ passed: true, problems: [] });
    expect(figures).toMatchObject({ mode: 'self-merge', mergers: 4, shared: 0.5, failedMerges: 0, resolvedByAgent: 0 });
    expect(figures.landed + figures.landedAfterWindow).toBeGreaterThanOrEqual(4);
    expect(figures.resolvedMechanically).toBeGreaterThanOrEqual(1);
    expect(figures.conflicts).toBe(figures.resolvedMechanically);
    expect(figures.waitSource).toBe('waitMs');
    expect(figures.waitShare).toBeGreaterThanOrEqual(0);
    expect(figures.waitShare).toBeLessThanOrEqual(figures.handoverShare);
    expect(figures.handoverShare).toBeLessThanOrEqual(1);
  });

  it('integrator: one serial integrator lands every merger’s branch and resolves each conflict itself', async () => {
    const { figures, check } = succeeded(await runMergeBench({ ...SHORT_RUN, mode: 'integrator' }));
    expect(check).toEqual({ passed: true, problems: [] });
    expect(figures).toMatchObject({ mode: 'integrator', failedMerges: 0, resolvedMechanically: 0, retriesPerCommit: 0, waitSource: 'queue' });
    expect(figures.landed + figures.landedAfterWindow).toBeGreaterThanOrEqual(4);
    expect(figures.resolvedByAgent).toBeGreaterThanOrEqual(1);
    expect(figures.conflicts).toBe(figures.resolvedByAgent);
  });

  it('a change in the middle of the shared file reaches the agent, which keeps both sides, and main is still right', async () => {
    const options: MergeBenchOptions = { ...SHORT_RUN, shared: 1, insertShare: 1, resolveMs: 20 };
    const { figures, check } = succeeded(await runMergeBench(options));
    expect(check).toEqual({ passed: true, problems: [] });
    expect(figures.resolvedByAgent).toBeGreaterThanOrEqual(1);
    expect(figures.resolvedMechanically).toBe(0);
    expect(figures.failedMerges).toBe(0);
    // Every merger's first change inserts at the same place from the same main: the first to
    // take main's turn lands, the others conflict, whatever the timing.
    expect(figures.landed + figures.landedAfterWindow).toBeGreaterThanOrEqual(1);
  });

  it('the integrator resolves a change in the middle of the shared file through git, keeping both sides', async () => {
    const { figures, check } = succeeded(await runMergeBench({ ...SHORT_RUN, mode: 'integrator', shared: 1, insertShare: 1, resolveMs: 20 }));
    expect(check).toEqual({ passed: true, problems: [] });
    expect(figures.resolvedByAgent).toBeGreaterThanOrEqual(1);
    expect(figures.failedMerges).toBe(0);
    expect(figures.landed + figures.landedAfterWindow).toBeGreaterThanOrEqual(2);
  });

  it('the check finds a landed change missing from main, a change main holds twice, and one never reported', async () => {
    const scratch = await createScratchRepository({ files: 10, mergers: 1 });
    try {
      const workspace = scratch.workspaces[0];
      if (workspace === undefined) throw new Error('no workspace');
      await writeFile(join(workspace.path, SHARED_FILE), `${SHARED_HEADER}\nm0 c1\nm0 c1\nm0 c2\n`);
      await writeFile(join(workspace.path, 'm0-note.txt'), 'not a change file\n');
      await runGit(workspace.path, ['add', '--all']);
      await runGit(workspace.path, ['commit', '--quiet', '-m', 'Hand-made']);
      await runGit(workspace.path, ['update-ref', 'refs/heads/main', 'HEAD']);
      const landed = (change: PlannedChange) => ({ at: 0, change });
      const check = await checkLanded(scratch.repo, [
        landed({ kind: 'line', merger: 0, number: 1, line: 'm0 c1', position: 'end' }),
        landed({ kind: 'file', merger: 0, number: 3, path: 'm0/c3.txt', text: 'm0 c3\n' }),
      ]);
      expect(check.passed).toBe(false);
      expect(check.problems).toEqual([
        `"m0 c1" was reported landed but is in ${SHARED_FILE} 2 times, not once`,
        'm0/c3.txt was reported landed but is not on main',
        `"m0 c2" is in ${SHARED_FILE} on main but was never reported landed`,
      ]);
      expect(await checkLanded(scratch.repo, [])).toMatchObject({ passed: false });
    } finally {
      await scratch.remove();
    }
  });
});
