import { existsSync } from 'node:fs';
import type { ColonyEvent } from '../../events/event-types.js';
import { landBranch, type LandResult } from '../../workspace/checkout/land-branch.js';
import { closeRepositoryObjects } from '../../workspace/git/repository-objects.js';
import { openRunStores } from '../setup/run-stores.js';
import { eventsDatabasePath } from '../setup/state-directory.js';
import { lockSession } from './session-prelude.js';

export interface LandSessionOptions {
  readonly repoDir: string;
  /** The state directory of the run; the repository's own when absent. */
  readonly stateDir?: string | undefined;
}

export type LandSessionResult =
  | { readonly ok: false; readonly error: string }
  | ({ readonly runId: string; readonly branch: string } & Extract<LandResult, { ok: true }>);

/**
 * `colony land`: brings the latest run's branch into the branch checked out, on the user's
 * word, once the run is over (a live run holds the locks, and this refuses). A run that landed
 * on the checked-out branch itself has nothing to bring in, and says so.
 */
export async function runLandSession(options: LandSessionOptions): Promise<LandSessionResult> {
  const session = await lockSession(options.repoDir, options.stateDir);
  if (!session.ok) return session;
  const { repo, stateDir } = session;
  try {
    if (!existsSync(eventsDatabasePath(stateDir))) {
      return { ok: false, error: `there is no colony run in ${stateDir} to land. Start one with \`colony run GOAL.md\`, or name its state directory with --state.` };
    }
    const stores = await openRunStores({ stateDir }, []);
    if (!stores.ok) return stores;
    let started: Extract<ColonyEvent, { type: 'run.started' }> | undefined;
    try {
      started = (await stores.events.read({ types: ['run.started'] })).findLast((event) => event.type === 'run.started');
    } finally {
      await stores.close();
    }
    if (started === undefined) return { ok: false, error: `there is no colony run in ${stateDir} to land. Start one with \`colony run GOAL.md\`.` };
    const branch = started.data.trunk?.branch ?? repo.checkedOutBranch;
    if (branch === repo.checkedOutBranch) {
      return { ok: false, error: `run ${started.runId} landed its work on ${branch}, the branch checked out, so there is nothing to bring in: \`git log ${branch}\` shows it.` };
    }
    const landed = await landBranch(repo, branch, repo.checkedOutBranch);
    if (!landed.ok) return landed;
    return { ...landed, runId: started.runId, branch };
  } finally {
    await closeRepositoryObjects(repo);
    await session.release();
  }
}
