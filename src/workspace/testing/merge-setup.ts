import { execFileSync } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventBody } from '../../events/event-types.js';
import { COLONY_IDENTITY } from '../git/git.js';
import { openRepository } from '../git/repository.js';
import type { Repository } from '../git/repository.js';
import { createTemporaryRepository } from './temporary-repository.js';
import type { TemporaryRepository } from './temporary-repository.js';
import { createWorktreeProvider } from '../providers/worktree/worktree-provider.js';
import type { Workspace } from '../workspace.js';

/** A temporary repository opened as colony opens it, with a helper to make workspaces. */
export interface MergeTestSetup {
  readonly temporary: TemporaryRepository;
  readonly repo: Repository;
  workspace(id: string): Promise<Workspace>;
  mainCommit(): Promise<string>;
}

export async function createMergeTestSetup(files?: Readonly<Record<string, string>>): Promise<MergeTestSetup> {
  const temporary = await createTemporaryRepository(files);
  const opened = await openRepository(temporary.root);
  if (!opened.ok) throw new Error(opened.error);
  const repo = opened.repo;
  const parentDir = join(await realpath(temporary.base), 'workspaces');
  return {
    temporary,
    repo,
    workspace: (id) => createWorktreeProvider(repo).create({ id, parentDir }),
    mainCommit: async () => (await temporary.git(['rev-parse', `refs/heads/${repo.mainBranch}`])).trim(),
  };
}

/** Collects the events a merge emits, in order. */
export function eventRecorder(): { readonly events: EventBody[]; readonly record: (event: EventBody) => void } {
  const events: EventBody[] = [];
  return { events, record: (event) => events.push(event) };
}

/**
 * Moves main forward by one empty commit, synchronously, so it can run inside an
 * `record` callback between a merge reading main and swapping it.
 */
export function advanceMainNow(repo: Repository): string {
  const git = (args: readonly string[]): string =>
    execFileSync('git', ['--git-dir', repo.gitDir, ...args], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_AUTHOR_NAME: COLONY_IDENTITY.name,
        GIT_AUTHOR_EMAIL: COLONY_IDENTITY.email,
        GIT_COMMITTER_NAME: COLONY_IDENTITY.name,
        GIT_COMMITTER_EMAIL: COLONY_IDENTITY.email,
      },
    }).trim();
  const parent = git(['rev-parse', `refs/heads/${repo.mainBranch}`]);
  const commit = git(['commit-tree', `${parent}^{tree}`, '-p', parent, '-m', 'Someone else landed first']);
  git(['update-ref', `refs/heads/${repo.mainBranch}`, commit, parent]);
  return commit;
}
