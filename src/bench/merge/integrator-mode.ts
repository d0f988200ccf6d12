import { describeFailure, runGit } from '../../workspace/git.js';
import type { Workspace } from '../../workspace/workspace.js';
import type { BenchRun } from './bench-run.js';
import { startIntegrator } from './integrator.js';
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
  const integrator = startIntegrator(run);
  await Promise.all(run.workspaces.map((workspace, merger) => integratorMerger(run, integrator, workspace, merger)));
  await integrator.finished;
}

async function integratorMerger(run: BenchRun, integrator: Integrator, workspace: Workspace, merger: number): Promise<void> {
  const random = seededRandom(mergerSeed(run.seed, merger));
  const time = run.tally.mergers[merger];
  if (time === undefined) throw new Error(`no time record for merger ${merger}`);
  const git = async (args: readonly string[]): Promise<string | null> => {
    const result = await runGit(workspace.path, args);
    if (result.code === 0) return result.stdout;
    recordFailure(run.tally, `m${merger}: ${describeFailure(args, result)}`);
    return null;
  };
  try {
    for (let number = 1; !run.stop.aborted; number += 1) {
      const change = planChange(random, merger, number, run.mix);
      const message = changeMessage(change);
      await applyChange(workspace.path, change);
      if ((await git(['add', '--all'])) === null || (await git(['commit', '--quiet', '-m', message])) === null) break;
      const commit = (await git(['rev-parse', 'HEAD']))?.trim();
      if (commit === undefined) break;
      const queued = run.elapsed();
      const result = await integrator.submit({ change, commit, message });
      time.waitMs += run.elapsed() - queued;
      time.handoverMs += run.elapsed() - queued;
      if (!result.landed) break;
      // The integrator made its own commit of the change: start the next one from main as it is now.
      if ((await git(['reset', '--hard', '--quiet', `refs/heads/${run.repo.trunk}`])) === null) break;
    }
  } finally {
    time.activeMs = run.elapsed();
  }
}
