import type { EventData } from '../../events/event-types.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { TrunkLanding } from '../../workspace/checkout/trunk-watch.js';
import type { ChosenTrunk } from '../../workspace/checkout/trunk-branch.js';
import type { Repository } from '../../workspace/git/repository.js';

/** Where a run lands, as `run.started` records it. */
export function trunkRecord(repo: Repository, trunk: ChosenTrunk, origin?: string): EventData<'run.started'>['trunk'] {
  return { branch: trunk.trunk, made: trunk.made, commit: trunk.commit, checkedOut: repo.checkedOutBranch, ...(origin === undefined ? {} : { origin }) };
}

/**
 * The origin a run records for worker hosts: the one it lands on, or, for a run in a shared
 * store without one, its own repository (for hosts on the same machine). None for a run in a
 * state directory, which no host can join.
 */
export function originShown(repo: Repository, storeUrl: string | undefined): string | undefined {
  if (repo.origin !== undefined) return repo.origin.url;
  return storeUrl === undefined ? undefined : repo.root;
}

/** The landings a run recorded so far, oldest first: a resumed run's watch knows them. */
export async function landingsOf(events: EventStore, runId: string): Promise<TrunkLanding[]> {
  return (await events.read({ runId, types: ['merge.landed'] })).flatMap((event) => (event.type === 'merge.landed' ? [event.data] : []));
}

/** The origin a run recorded in `run.started` (no password), or null for a run that recorded none. */
export async function recordedOriginOf(events: EventStore, runId: string): Promise<string | null> {
  const started = (await events.read({ runId, types: ['run.started'] })).at(0);
  return started?.type === 'run.started' ? (started.data.trunk?.origin ?? null) : null;
}
