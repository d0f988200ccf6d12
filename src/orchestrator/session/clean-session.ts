import { existsSync } from 'node:fs';
import type { EventBody } from '../../events/event-types.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { DamagedStoreError } from '../../store/sqlite/damaged-store-error.js';
import { pruneSalvageRefs } from '../../workspace/salvage-refs.js';
import { errorMessage } from '../../errors/error-message.js';
import { moveDamagedStateAside, storeDamage } from '../setup/damaged-state.js';
import { describeUnfinishedRun, findUnfinishedRun } from '../setup/run-history.js';
import { abandonRun, openRunStores, type RunStores } from '../setup/run-stores.js';
import { cleanLeftovers, type CleanTally } from '../setup/state-clean.js';
import { eventsDatabasePath } from '../setup/state-directory.js';
import { lockSession } from './session-prelude.js';

export interface CleanSessionOptions {
  readonly repoDir: string;
  /** The state directory to clean, as the command's flags name it. */
  readonly stateDir: string;
  /** Also what a stopped (unfinished) run keeps for `colony resume`; the run is then recorded as abandoned. */
  readonly stopped: boolean;
  /** Move a state directory whose store is damaged aside instead (and nothing else). */
  readonly damaged: boolean;
  /** Also delete the salvage refs (`refs/colony/salvaged/*`) of the repository. */
  readonly salvage: boolean;
  readonly secrets?: readonly string[];
}

/** What `colony clean` did: the counts it freed, and what it kept and why. */
export interface CleanReport extends CleanTally {
  readonly stateDir: string;
  /** False when there was no state directory at all. */
  readonly found: boolean;
  /** Salvage refs deleted (`--salvage`). */
  readonly prunedRefs: readonly string[];
  /** The unfinished run recorded as abandoned (`--stopped`), or null. */
  readonly abandoned: string | null;
  /** The unfinished run whose workspaces and spill files were kept for `colony resume`, as a message names it, or null. */
  readonly keptForResume: string | null;
  /** Where a damaged state directory was moved (`--damaged`), or null. */
  readonly movedTo: string | null;
  /** Salvage refs made for the branches of workspaces a damaged state directory held. */
  readonly salvaged: readonly string[];
}

/** `usage`: the flags do not fit what is there, and the error says what to pass instead. */
export type CleanSessionResult = { readonly ok: true; readonly report: CleanReport } | { readonly ok: false; readonly error: string; readonly usage: boolean };

const NOTHING: CleanTally = { mounts: 0, workspaces: 0, worktreeRecords: 0, bytes: 0, kept: [], problems: [] };

/**
 * `colony clean`: removes what runs that ended (or were abandoned) left in a state directory,
 * under the same locks a run takes, so nothing of a live run is touched: a live run holds them,
 * and clean refuses. The event log stays, and so does what an unfinished run needs for
 * `colony resume` unless `stopped` says to abandon it. With `damaged`, the state directory of a
 * damaged store is moved aside instead (see `moveDamagedStateAside`).
 */
export async function runCleanSession(options: CleanSessionOptions): Promise<CleanSessionResult> {
  const found = existsSync(options.stateDir);
  if (options.damaged && !found) return { ok: false, usage: true, error: `there is no state directory at ${options.stateDir} to move aside. Pass the one colony named as damaged with --state.` };
  // Made (and removed again on release) when it was not there: --salvage needs the locks all the same.
  const session = await lockSession(options.repoDir, options.stateDir);
  if (!session.ok) return { ok: false, usage: false, error: `colony clean touches nothing a live run uses: ${session.error}` };
  const { repo, stateDir } = session;
  const base = { ...NOTHING, stateDir, found, prunedRefs: [], abandoned: null, keptForResume: null, movedTo: null, salvaged: [] };
  try {
    let damage: DamagedStoreError | null;
    try {
      damage = await storeDamage(stateDir);
    } catch (error) {
      return { ok: false, usage: false, error: `cannot open the event log in ${stateDir}: ${errorMessage(error)}` };
    }
    if (options.damaged) {
      if (damage === null) return { ok: false, usage: true, error: `the store in ${stateDir} is not damaged: there is nothing to move aside. Run colony clean without --damaged.` };
      session.stateLock.release();
      const moved = await moveDamagedStateAside(repo, stateDir);
      if (!moved.ok) return { ok: false, usage: false, error: moved.error };
      const { movedTo, mounts, worktreeRecords, salvaged, problems } = moved;
      return { ok: true, report: { ...base, mounts, worktreeRecords, problems, movedTo, salvaged } };
    }
    if (damage !== null) return { ok: false, usage: true, error: damage.message };
    if (!found) {
      const pruned = options.salvage ? await pruneSalvageRefs(repo) : { pruned: [], problems: [] };
      return { ok: true, report: { ...base, prunedRefs: pruned.pruned, problems: pruned.problems } };
    }
    return await cleanWithLog(options, session, base);
  } finally {
    await session.release();
  }
}

type LockedSession = Extract<Awaited<ReturnType<typeof lockSession>>, { ok: true }>;

async function cleanWithLog(options: CleanSessionOptions, session: LockedSession, base: CleanReport): Promise<CleanSessionResult> {
  const { repo, stateDir } = session;
  const stores = existsSync(eventsDatabasePath(stateDir)) ? await openRunStores({ stateDir }, options.secrets ?? []) : null;
  if (stores !== null && !stores.ok) return { ok: false, usage: false, error: stores.error };
  try {
    const unfinished = stores === null ? null : await findUnfinishedRun(stores.events);
    if (options.salvage && unfinished !== null && !options.stopped) {
      return {
        ok: false,
        usage: true,
        error: `the run ${describeUnfinishedRun(unfinished)} has not ended, and its planners may still hand salvaged work on: --salvage prunes salvage refs only once no run can go on. Pass --stopped as well to abandon it, or finish it with colony resume first.`,
      };
    }
    let abandoned: string | null = null;
    if (stores !== null && unfinished !== null && options.stopped) {
      await abandonRun(stores.events, unfinished);
      abandoned = unfinished.runId;
    }
    const keepResumable = unfinished !== null && !options.stopped;
    const tally = await cleanLeftovers({ repo, stateDir, lock: session.stateLock, keepResumable, record: await recorderOf(stores) });
    // After the sweep, which may have salvaged work under new refs: those go too.
    const pruned = options.salvage ? await pruneSalvageRefs(repo) : { pruned: [], problems: [] };
    await stores?.events.flush();
    const keptForResume = keepResumable ? describeUnfinishedRun(unfinished) : null;
    return { ok: true, report: { ...base, ...tally, problems: [...tally.problems, ...pruned.problems], prunedRefs: pruned.pruned, abandoned, keptForResume } };
  } finally {
    await stores?.close();
  }
}

/**
 * What clean does is recorded in the log under the state directory's latest run, whose
 * leftovers they are (as `colony green --now` records there): `colony status` then lists the
 * work a sweep salvaged. Nowhere when no run was recorded.
 */
async function recorderOf(stores: RunStores | null): Promise<(body: EventBody) => void> {
  const runId = stores === null ? null : await latestRunId(stores.events);
  if (stores === null || runId === null) return () => undefined;
  return (body) => stores.events.append({ ...body, runId, agentId: 'system' });
}

async function latestRunId(events: EventStore): Promise<string | null> {
  return (await events.read({ types: ['run.started'] })).at(-1)?.runId ?? null;
}
