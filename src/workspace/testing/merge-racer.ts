import { appendFile, mkdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mergeToMain } from '../merge/merge-to-main.js';
import { openRepository } from '../git/repository.js';
import { createWorktreeProvider } from '../providers/worktree/worktree-provider.js';

/**
 * One process of the cross-process merge race: makes WORKSPACES workspaces in REPO, then has
 * each land ROUNDS changes (a file of its own each round, and a line appended to a shared
 * file), all at once, with whatever else merges into the same main from other processes.
 * Prints one JSON line: what landed, any outcome that was not 'landed', and how many landed in-process.
 */
const repoPath = process.env.REPO ?? '';
const name = process.env.RACER ?? 'racer';
const workspaceCount = Number(process.env.WORKSPACES ?? '4');
const rounds = Number(process.env.ROUNDS ?? '3');

const opened = await openRepository(repoPath);
if (!opened.ok) throw new Error(opened.error);
const repo = opened.repo;
/**
 * colony runs worktree administration one at a time per repository within a process (git races
 * itself when two `git worktree add` run at once); one clone is driven by one colony process.
 * The racers are three processes on one clone, so they take turns making workspaces through a
 * lock directory of their own. Only the merges race.
 */
async function takingTurns<T>(action: () => Promise<T>): Promise<T> {
  const lock = join(repoPath, '..', 'workspace-creation.lock');
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  try {
    return await action();
  } finally {
    await rmdir(lock);
  }
}

const workspaces = [];
for (let index = 0; index < workspaceCount; index += 1) {
  workspaces.push(await takingTurns(() => createWorktreeProvider(repo).create({ id: `${name}-${index}`, parentDir: join(repoPath, '..', 'workspaces') })));
}
const landed: string[] = [];
let inProcess = 0;
const problems: string[] = [];
await Promise.all(
  workspaces.map(async (workspace) => {
    for (let round = 0; round < rounds; round += 1) {
      const change = `${workspace.id}-${round}`;
      await mkdir(join(workspace.path, 'out'), { recursive: true });
      await writeFile(join(workspace.path, 'out', `${change}.txt`), `${change}\n`);
      await appendFile(join(workspace.path, 'shared.txt'), `${change}\n`);
      const outcome = await mergeToMain(repo, workspace, {
        message: `Land ${change}`,
        maxAttempts: 50,
        record: (event) => {
          if (event.type === 'merge.landed' && event.data.via === 'in-process') inProcess += 1;
        },
      });
      if (outcome.status === 'landed') landed.push(change);
      else problems.push(`${change}: ${JSON.stringify(outcome)}`);
    }
  }),
);
process.stdout.write(`${JSON.stringify({ landed, problems, inProcess })}\n`);
process.exit(0);
