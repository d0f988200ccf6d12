import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTemporaryRepository, type TemporaryRepository } from './testing/temporary-repository.js';
import { openRepository, type Repository } from './git/repository.js';
import { keepBranchAsSalvage, listSalvageRefs, pruneSalvageRefs } from './salvage-refs.js';

describe('salvage refs', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;

  beforeEach(async () => {
    temporary = await createTemporaryRepository();
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
  });
  afterEach(async () => {
    await temporary.remove();
  });

  /** A branch off main with one commit main lacks. */
  async function branchAhead(branch: string): Promise<string> {
    await temporary.git(['checkout', '--quiet', '-b', branch]);
    await temporary.write('work.txt', `${branch}\n`);
    await temporary.git(['add', 'work.txt']);
    await temporary.git(['commit', '--quiet', '-m', `work of ${branch}`]);
    const commit = (await temporary.git(['rev-parse', 'HEAD'])).trim();
    await temporary.git(['checkout', '--quiet', 'main']);
    return commit;
  }

  it('keeps the commits of a branch main lacks under its salvage ref, and deletes the branch', async () => {
    const commit = await branchAhead('colony/worker-a');
    expect(await keepBranchAsSalvage(repo, 'colony/worker-a', 'test')).toEqual({ ok: true, deleted: true, salvageRef: 'refs/colony/salvaged/worker-a' });
    expect(await temporary.git(['branch', '--list', 'colony/*'])).toBe('');
    expect(await listSalvageRefs(repo)).toEqual({ ok: true, refs: [{ ref: 'refs/colony/salvaged/worker-a', commit }] });
  });

  it('deletes a branch main contains without a salvage ref, and takes a missing branch as gone', async () => {
    await temporary.git(['branch', 'colony/worker-b']);
    expect(await keepBranchAsSalvage(repo, 'colony/worker-b', 'test')).toEqual({ ok: true, deleted: true, salvageRef: null });
    expect(await keepBranchAsSalvage(repo, 'colony/worker-b', 'test')).toEqual({ ok: true, deleted: false, salvageRef: null });
    expect(await listSalvageRefs(repo)).toEqual({ ok: true, refs: [] });
  });

  it('keeps the branch when its salvage ref holds other work', async () => {
    const other = await branchAhead('other');
    await temporary.git(['update-ref', 'refs/colony/salvaged/worker-c', other]);
    await branchAhead('colony/worker-c');
    const kept = await keepBranchAsSalvage(repo, 'colony/worker-c', 'test');
    expect(kept).toEqual({ ok: false, error: expect.stringContaining('refs/colony/salvaged/worker-c holds other work already') as string });
    expect(await temporary.git(['branch', '--list', 'colony/*'])).toContain('colony/worker-c');
  });

  it('prunes every salvage ref and says which', async () => {
    await branchAhead('colony/worker-a');
    await branchAhead('colony/worker-b');
    await keepBranchAsSalvage(repo, 'colony/worker-a', 'test');
    await keepBranchAsSalvage(repo, 'colony/worker-b', 'test');
    expect(await pruneSalvageRefs(repo)).toEqual({ pruned: ['refs/colony/salvaged/worker-a', 'refs/colony/salvaged/worker-b'], problems: [] });
    expect(await temporary.git(['for-each-ref', 'refs/colony/'])).toBe('');
    expect(await pruneSalvageRefs(repo)).toEqual({ pruned: [], problems: [] });
  });
});
