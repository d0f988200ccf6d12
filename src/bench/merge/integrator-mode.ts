import { COLONY_IDENTITY, describeFailure, runGit } from '../../workspace/git/git.js';
import { identityLine, serializeCommit } from '../../workspace/git/git-objects.js';
import { repositoryObjects } from '../../workspace/git/repository-objects.js';
import type { RepositoryObjects } from '../../workspace/git/repository-objects.js';
import type { Workspace } from '../../workspace/workspace.js';
import type { BenchRun } from './bench-run.js';
import { startIntegrator, treeOf } from './integrator.js';
import type { Integrator } from './integrator.js';
import { applyChange, changeMessage, planChange } from './planned-change.js';
import { recordFailure } from './run-tally.js';
import { mergerSeed, seededRandom } from './seeded-random.js';

/**
 * The baseline: mergers commit each change on their own branch and hand it to one serial
 * integrator, wait until it is on main (one change in flight per merger), bring their
 * workspace to the new main and make the next change. Runs until the run's window closes.
 */
export async function runIntegratorMode(run: BenchRun): Promise<void> {
  const objects = await repositoryObjects(run.repo);
  if (objects === null) throw new Error('the scratch repository is not one whose objects colony reads in-process');
  const main = await objects.refs.readBranch(run.repo.mainBranch);
  if (main === null) throw new Error(`the scratch repository has no ${run.repo.mainBranch}`);
  const integrator = startIntegrator(run, objects, main, await treeOf(objects, main));
  await Promise.all(run.workspaces.map((workspace, merger) => integratorMerger(run, objects, integrator, workspace, merger)));
  await integrator.finished;
}

/**
 * One merger: commits its change the way colony's own landing does (`git add`, `git
 * write-tree`, the commit written in-process and the branch moved by the shared ref process),
 * queues it, and after it landed moves the workspace to main with `git reset --keep`: the
 * same three git processes per change as a self-merge that lands in-process.
 */
async function integratorMerger(run: BenchRun, objects: RepositoryObjects, integrator: Integrator, workspace: Workspace, merger: number): Promise<void> {
  const random = seededRandom(mergerSeed(run.seed, merger));
  const time = run.tally.mergers[merger];
  if (time === undefined) throw new Error(`no time record for merger ${merger}`);
  const git = async (args: readonly string[]): Promise<string | null> => {
    const result = await runGit(workspace, args);
    if (result.code === 0) return result.stdout;
    recordFailure(run.tally, `m${merger}: ${describeFailure(args, result)}`);
    return null;
  };
  let base = workspace.baseCommit;
  try {
    for (let number = 1; !run.stop.aborted; number += 1) {
      const change = planChange(random, merger, number, run.mix);
      await applyChange(workspace.path, change);
      if ((await git(['add', '--all'])) === null) break;
      const tree = (await git(['write-tree']))?.trim();
      if (tree === undefined) break;
      const identity = identityLine(COLONY_IDENTITY.name, COLONY_IDENTITY.email, new Date());
      const commit = await objects.store.write('commit', serializeCommit({ tree, parents: [base], author: identity, committer: identity, message: changeMessage(change) }));
      const moved = await objects.refs.swap([{ ref: `refs/heads/${workspace.branch}`, next: commit, expected: base }]);
      if (!moved.ok) {
        recordFailure(run.tally, `m${merger}: could not move ${workspace.branch} to its change: ${moved.error}`);
        break;
      }
      const queued = run.elapsed();
      const result = await integrator.submit({ change, commit });
      time.waitMs += run.elapsed() - queued;
      time.handoverMs += run.elapsed() - queued;
      if (!result.landed) break;
      // The integrator made its own commit of the change: go on from main as it is now.
      const main = (await objects.refs.readBranch(run.repo.mainBranch)) ?? result.main;
      if ((await git(['reset', '--quiet', '--keep', main])) === null) break;
      base = main;
    }
  } finally {
    time.activeMs = run.elapsed();
  }
}
