import { mergeToMain } from '../../workspace/merge/merge-to-main.js';
import type { Workspace } from '../../workspace/workspace.js';
import { pause } from './bench-run.js';
import type { BenchRun } from './bench-run.js';
import { keepBothSidesInFiles } from './keep-both-sides.js';
import { applyChange, changeMessage, planChange } from './planned-change.js';
import type { PlannedChange } from './planned-change.js';
import { recordFailure } from './run-tally.js';
import { mergerSeed, seededRandom } from './seeded-random.js';

/** A merger gives up after this many `failed` merges of one change in a row. */
const FAILED_MERGES_IN_A_ROW = 3;

/**
 * Self-merge: every merger lands its own changes with `mergeToMain`, as colony's workers do.
 * Runs until the run's window closes; merges in flight then are finished, so every outcome is
 * known to the correctness check.
 */
export async function runSelfMergeMode(run: BenchRun): Promise<void> {
  await Promise.all(run.workspaces.map((workspace, merger) => selfMerger(run, workspace, merger)));
}

async function selfMerger(run: BenchRun, workspace: Workspace, merger: number): Promise<void> {
  const random = seededRandom(mergerSeed(run.seed, merger));
  const time = run.tally.mergers[merger];
  if (time === undefined) throw new Error(`no time record for merger ${merger}`);
  try {
    for (let number = 1; !run.stop.aborted; number += 1) {
      const change = planChange(random, merger, number, run.mix);
      await applyChange(workspace.path, change);
      if (!(await landChange(run, workspace, change))) break;
    }
  } finally {
    time.activeMs = run.elapsed();
  }
}

/**
 * Calls mergeToMain until the change lands. A conflict that reaches the agent costs
 * resolve-ms, then both sides are kept and the merge is called again. False when the merger
 * should stop: the run ended while the agent was resolving, or merging kept failing.
 */
async function landChange(run: BenchRun, workspace: Workspace, change: PlannedChange): Promise<boolean> {
  const { tally } = run;
  const time = tally.mergers[change.merger];
  if (time === undefined) throw new Error(`no time record for merger ${change.merger}`);
  let failedInARow = 0;
  for (;;) {
    const called = run.elapsed();
    const outcome = await mergeToMain(run.repo, workspace, { message: changeMessage(change) });
    time.handoverMs += run.elapsed() - called;
    switch (outcome.status) {
      case 'landed':
        time.waitMs += outcome.waitMs;
        tally.landings.push({ at: run.elapsed(), change });
        tally.retries += outcome.attempts - 1;
        if (outcome.autoResolved.length > 0) tally.resolvedMechanically += 1;
        return true;
      case 'conflicted':
        tally.resolvedByAgent += 1;
        if (!(await pause(run.resolveMs, run.stop))) return false;
        await keepBothSidesInFiles(workspace.path, outcome.files);
        break;
      case 'nothing-to-merge':
        recordFailure(tally, `m${change.merger} c${change.number}: nothing to merge after making a change: ${outcome.reason}`);
        return true;
      case 'check-failed':
        // The bench passes no merge check, so this would be mergeToMain's mistake.
        recordFailure(tally, `m${change.merger} c${change.number}: a merge check failed, though none was asked for`);
        return false;
      case 'failed':
        recordFailure(tally, `m${change.merger} c${change.number}: ${outcome.error}`);
        failedInARow += 1;
        if (failedInARow >= FAILED_MERGES_IN_A_ROW || run.stop.aborted) return false;
        break;
      default:
        return unknownOutcome(outcome);
    }
  }
}

/** Makes a new kind of outcome a type error here until the bench decides what it means. */
function unknownOutcome(outcome: never): never {
  throw new Error(`mergeToMain answered ${JSON.stringify(outcome)}, which the merge bench does not know`);
}
