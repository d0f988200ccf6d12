import { statfsSync, statSync } from 'node:fs';
import type { EventBody } from '../events/event-types.js';
import { abortableSleep } from '../model/resilience/abortable-sleep.js';
import type { EventStore } from '../store/events/event-store.js';
import { isDiskFull } from '../store/sqlite/disk-full.js';
import { createGroupFlush } from '../store/events/group-flush.js';
import { errorMessage } from '../errors/error-message.js';

/** How often a run that cannot write its state tries again. */
const RETRY_MS = 1_000;
/** The free space below which no agent starts: 256 MiB, or 5% of a smaller file system. */
const RESERVE_BYTES = 256 * 1024 ** 2;
const RESERVE_SHARE = 0.05;

/**
 * What stands between the run and a full disk. Writing the event log is how colony keeps its
 * promise that nothing recorded is lost, so when the disk is full colony does not fail the run:
 * it stops starting agents, keeps every event it has in memory, records `disk.full` (it lands
 * in the log with the rest once it can be written), and tries again every second until a write
 * succeeds, then records `disk.recovered`. It also stops starting agents a little before the
 * disk is full (below a reserve of free space): SQLite reuses its log's pages, so a nearly full
 * disk may let the log go on while workers' files and git can no longer be written.
 */
export interface DiskGuard {
  /** Whether the state could not be written at the last try. */
  isFull(): boolean;
  /**
   * Makes every recorded event durable, waiting while the disk is full (or until `signal`
   * aborts; then it returns with the events still buffered). Other write errors are thrown.
   * Callers in one turn of the event loop share one write and one sync.
   */
  flush(signal?: AbortSignal): Promise<void>;
  /**
   * Runs a write to the state (a task table change) and resolves to its result, waiting and
   * trying again while it fails because the disk is full. Other errors reject. Resolves to
   * null only when `signal` aborted while the disk was full.
   */
  write<Result>(operation: () => Promise<Result>, signal?: AbortSignal): Promise<Result | null>;
  /**
   * For the runner, before it starts an agent: false while the disk is full (one flush is tried).
   * Rejects when the state directory is not the one the run started with any more (someone
   * deleted it): the run must stop and say so, not start agents in workspaces that are gone.
   */
  canStartAgents(): Promise<boolean>;
}

export interface DiskGuardOptions {
  readonly events: EventStore;
  /** The state directory: where free space is measured for the record. */
  readonly path: string;
  readonly record: (event: EventBody) => void;
  readonly now: () => number;
  readonly retryMs?: number;
  /** Free bytes below which no agent starts; see RESERVE_BYTES when absent. */
  readonly reserveBytes?: number;
  /**
   * The event log's file in the state directory. A recursive delete of the state directory can
   * leave the directory itself behind (a workspace mounted in it is busy), but never the log.
   */
  readonly logPath?: string;
}

export function createDiskGuard(options: DiskGuardOptions): DiskGuard {
  const { events, path, record, now } = options;
  const retryMs = options.retryMs ?? RETRY_MS;
  const reserveBytes = options.reserveBytes ?? defaultReserve(path);
  let fullSince: number | null = null;
  const group = createGroupFlush(events);
  const watched = [path, ...(options.logPath === undefined ? [] : [options.logPath])].map((file) => ({ file, atStart: fileIdentity(file) }));
  const checkStateDir = (): void => {
    if (watched.every(({ file, atStart }) => atStart === null || fileIdentity(file) === atStart)) return;
    throw new Error(
      `the state directory ${path} was deleted while the run went on, and the run's event log and workspaces with it, so the run stops: ` +
        'what landed on main stays there. Start again with colony run.',
    );
  };

  const noteFull = (error: unknown): void => {
    if (fullSince !== null) return;
    fullSince = now();
    record({ type: 'disk.full', data: { path, freeBytes: freeBytes(path), message: errorMessage(error) } });
  };
  const belowReserve = (): number | null => {
    const free = freeBytes(path);
    return free !== null && free < reserveBytes ? free : null;
  };
  const lowOnSpace = (): boolean => {
    const free = belowReserve();
    if (free === null) return false;
    noteFull(`only ${free} bytes are free where colony keeps its state, less than the ${reserveBytes} it keeps in reserve`);
    return true;
  };
  const noteWritable = (): void => {
    if (fullSince === null) return;
    const pausedMs = now() - fullSince;
    fullSince = null;
    record({ type: 'disk.recovered', data: { path, pausedMs } });
  };
  /** One try: true when the log was written. */
  const tryFlush = async (): Promise<boolean> => {
    try {
      await events.flush();
    } catch (error) {
      if (!isDiskFull(error)) throw error;
      noteFull(error);
      return false;
    }
    // Over only when writes succeed and the reserve is back: a write that squeezes into the
    // last bytes does not end it, or it would flap with every flush.
    if (fullSince !== null && belowReserve() === null) {
      noteWritable();
      return await tryFlush();
    }
    return true;
  };

  const write = async <Result>(operation: () => Promise<Result>, signal?: AbortSignal): Promise<Result | null> => {
    for (;;) {
      try {
        const result = await operation();
        if (fullSince !== null) await tryFlush();
        return result;
      } catch (error) {
        if (!isDiskFull(error)) throw error;
        noteFull(error);
      }
      if (signal?.aborted === true) return null;
      await abortableSleep(retryMs, signal);
    }
  };

  return {
    isFull: () => fullSince !== null,
    async flush(signal) {
      for (;;) {
        try {
          // Agents that ask in the same turn share one write and one sync (durable batching).
          await group();
        } catch (error) {
          if (!isDiskFull(error)) throw error;
          noteFull(error);
          if (signal?.aborted === true) return;
          await abortableSleep(retryMs, signal);
          continue;
        }
        if (fullSince === null || belowReserve() !== null) return;
        // Writable again: the recovery is recorded and written with the rest.
        noteWritable();
      }
    },
    write,
    canStartAgents: async () => {
      checkStateDir();
      return !lowOnSpace() && (await tryFlush());
    },
  };
}

function defaultReserve(path: string): number {
  try {
    const info = statfsSync(path);
    return diskReserveBytes(info.blocks * info.bsize);
  } catch {
    return RESERVE_BYTES;
  }
}

/** The free space below which no agent starts on a file system of `totalBytes`: 256 MiB, or 5% of a smaller one. */
export function diskReserveBytes(totalBytes: number): number {
  return Math.min(RESERVE_BYTES, Math.floor(totalBytes * RESERVE_SHARE));
}

/** Which file `path` is (its device and inode), or null when there is none there. */
function fileIdentity(path: string): string | null {
  try {
    const info = statSync(path);
    return `${info.dev}:${info.ino}`;
  } catch {
    return null;
  }
}

function freeBytes(path: string): number | null {
  try {
    const info = statfsSync(path);
    return info.bavail * info.bsize;
  } catch {
    return null;
  }
}
