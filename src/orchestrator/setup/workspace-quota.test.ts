import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventBody } from '../../events/event-types.js';
import { openRepository, type Repository } from '../../workspace/git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../../workspace/testing/temporary-repository.js';
import { createWorktreeProvider } from '../../workspace/providers/worktree/worktree-provider.js';
import { createWorkspaceQuota } from './workspace-quota.js';

describe('the workspace disk cap', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let parentDir: string;
  let events: EventBody[];
  beforeEach(async () => {
    temporary = await createTemporaryRepository({ 'README.md': '# project\n', 'src/app.ts': 'export const app = 1;\n' });
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
    parentDir = join(await realpath(temporary.base), 'workspaces');
    events = [];
  });
  afterEach(async () => {
    await temporary.remove();
  });

  it('admits a workspace while it fits, holds back once it would not, and admits again when one is removed', async () => {
    const provider = createWorktreeProvider(repo);
    const fresh = await provider.estimateFreshBytes();
    let clock = 1_000_000;
    const quota = createWorkspaceQuota({ provider, capBytes: fresh * 3, record: (event) => events.push(event), now: () => clock });
    expect(await quota.admit(0)).toBe(true);
    const first = await quota.provider.create({ id: 'first', parentDir });
    expect(await quota.admit(1)).toBe(true);
    // Once measured again, what was written in the first workspace leaves no room for another.
    await temporary.write('big.bin', 'x'.repeat(fresh * 3), first.path);
    clock += 60_000;
    expect(await quota.admit(1)).toBe(false);
    expect(await quota.admit(1)).toBe(false);
    expect(events).toEqual([{ type: 'workspace.quota-reached', data: { usedBytes: quota.usedBytes(), capBytes: fresh * 3, workspaces: 1, runningWorkers: 1 } }]);
    expect(quota.usedBytes()).toBeGreaterThan(fresh * 3);
    // With no worker running nothing would free space: the run goes on rather than stall.
    expect(await quota.admit(0)).toBe(true);
    expect(await quota.provider.remove(first, { deleteBranch: true })).toEqual({ removed: true });
    expect(quota.usedBytes()).toBe(0);
    expect(await quota.admit(1)).toBe(true);
  });

  it('counts workspaces being made, so a burst of workers cannot all pass at once', async () => {
    const provider = createWorktreeProvider(repo);
    const fresh = await provider.estimateFreshBytes();
    const quota = createWorkspaceQuota({ provider, capBytes: Math.floor(fresh * 1.5), record: (event) => events.push(event) });
    expect(await quota.admit(0)).toBe(true);
    const making = quota.provider.create({ id: 'making', parentDir });
    expect(await quota.admit(1)).toBe(false);
    await making;
    expect(await quota.admit(1)).toBe(false);
    expect(events.map((event) => event.type)).toEqual(['workspace.quota-reached']);
  });
});
