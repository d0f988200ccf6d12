import type { ColonyEvent } from '../../events/event-types.js';
import { resolveRunSettings, type RunSettings } from '../../events/run-settings.js';
import type { EventStore } from '../../store/events/event-store.js';

/** A `colony run` that has not ended: crashed or killed (no end recorded), or stopped (Ctrl-C). */
export interface UnfinishedRun {
  readonly runId: string;
  readonly title: string;
  /** The repository the run works on, as it recorded it. */
  readonly repo: string;
  readonly startedAt: number;
  /** 'stopped' when it was stopped on purpose and said so; 'crashed' when it ended without a word. */
  readonly state: 'stopped' | 'crashed';
  /** What it was told; null for a run recorded before colony kept its settings, which cannot be resumed. */
  readonly settings: RunSettings | null;
  /** How many times it was resumed already. */
  readonly resumes: number;
}

const RUN_EVENTS = ['run.started', 'run.configured', 'run.ended', 'run.resumed'] as const;

/**
 * The latest `colony run` recorded in the log if it has not ended, else null. A run ends with
 * any status but 'stopped' (done, failed, budget-exhausted, abandoned); a stopped run and one
 * that crashed are unfinished until resumed to an end or abandoned with `colony run --new`.
 */
export async function findUnfinishedRun(events: EventStore): Promise<UnfinishedRun | null> {
  const runEvents = await events.read({ types: [...RUN_EVENTS] });
  const started = [...runEvents].reverse().find((event) => event.type === 'run.started' && event.data.mode === 'run');
  if (started === undefined || started.type !== 'run.started') return null;
  const own = runEvents.filter((event) => event.runId === started.runId);
  const last = own.findLast((event) => event.type === 'run.ended' || event.type === 'run.resumed');
  if (last?.type === 'run.ended' && last.data.status !== 'stopped') return null;
  const configured = own.find((event): event is Extract<ColonyEvent, { type: 'run.configured' }> => event.type === 'run.configured');
  return {
    runId: started.runId,
    title: started.data.title,
    repo: started.data.repo,
    startedAt: started.ts,
    state: last?.type === 'run.ended' ? 'stopped' : 'crashed',
    settings: configured === undefined ? null : resolveRunSettings(configured.data.settings),
    resumes: own.filter((event) => event.type === 'run.resumed').length,
  };
}

/** How an unfinished run reads in a message: `run-x1 ("Build the pad", started 2026-11-30 10:02, crashed)`. */
export function describeUnfinishedRun(run: UnfinishedRun): string {
  const started = new Date(run.startedAt).toISOString().slice(0, 16).replace('T', ' ');
  const how = run.state === 'stopped' ? 'stopped' : 'ended without finishing (crashed or killed)';
  return `${run.runId} ("${run.title}", started ${started} UTC, ${how})`;
}
