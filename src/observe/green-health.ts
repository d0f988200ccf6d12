import type { ColonyEvent } from '../events/event-types.js';
import type { EventOf } from './event-of.js';
import { shareOf } from './ranking.js';

/** The latest green snapshot: the commit of main it checked, whether the check passed, when, and why it was taken. */
export interface GreenSnapshot {
  readonly commit: string;
  readonly passed: boolean;
  /** When it was recorded (`green.checked`'s time), in milliseconds since the epoch. */
  readonly at: number;
  readonly trigger: EventOf<'green.checked'>['data']['trigger'];
}

/**
 * Where the green branch stands and how healthy main was, folded from a run's green events.
 *
 * Red time. Main turns red when a commit that breaks the check lands, and a red snapshot is
 * how colony learns it; a break fixed before any snapshot saw it is never seen, and counts
 * nothing. A red period opens at the first red snapshot after a passing one (or after the
 * run's start) and starts:
 * - at the `merge.landed` time of the `firstBad` of a bisect of it (`green.bisected`), the
 *   earliest one when several failures were bisected (overlapping breaks are one period);
 * - at the run's start when a bisect found main failing so at the start (`firstBad` null);
 * - at the red snapshot's time when nothing was bisected, or the first bad commit did not land
 *   in this run;
 * and never before the previous passing snapshot's commit landed (nor before the run's start).
 * It ends at the `merge.landed` time of the commit the next passing snapshot checked, or at
 * that snapshot's time when its commit did not land in this run; never before it began. A
 * period still open is counted up to the run's end (`run.ended`) or, while the run goes on,
 * its latest event. A bisect refines only the period open when it is recorded.
 */
export interface GreenHealth {
  /** Where the green branch points: the `to` of the latest `green.advanced`; null before it moved in this run. */
  readonly commit: string | null;
  /** The green branch's name, from its events or the run's settings; null when neither named it. */
  readonly branch: string | null;
  /** `green.checked` events, and those among them that did not pass (failed or timed out). */
  readonly snapshots: number;
  readonly redSnapshots: number;
  /** Time main was red over the run's time (its start to its end, or to its latest event while it goes on), from 0 to 1. */
  readonly redShare: number;
  /** The mean length of the red periods that closed, in seconds (to the millisecond); null when none closed. */
  readonly meanTimeToGreenS: number | null;
  /** The latest snapshot was red: a red period is open. */
  readonly redNow: boolean;
  /** When the open red period began, in milliseconds since the epoch; null when main is not red now. */
  readonly since: number | null;
  /** Distinct failures reported to planners: `green.reported` events. */
  readonly failures: number;
  /** `green.bisected` events, those of failures already reported included. */
  readonly bisects: number;
  /**
   * For each move of the green branch after its first in this run, the commits that landed on
   * main (`merge.landed`) since the move before: how far apart the green points were.
   */
  readonly commitsBetweenGreen: readonly number[];
  readonly lastSnapshot: GreenSnapshot | null;
  /** Why the green branch could not move (the latest `green.blocked`), until it moves again; null when it is not blocked. */
  readonly blocked: string | null;
}

/**
 * The green health of one run, folded one event at a time: the caller feeds every event of the
 * run (the clock runs on all of them), in order. It keeps one time per commit landed, to date a
 * bisected first bad commit, and nothing per event.
 */
export interface GreenHealthFold {
  add(event: ColonyEvent): void;
  /** True once the run recorded a green event or settings with a green loop: only then is there green health to show. */
  readonly active: boolean;
  /** The health now, as fresh plain data. */
  result(): GreenHealth;
}

export function createGreenHealthFold(): GreenHealthFold {
  let active = false;
  let runStart: number | null = null;
  let firstEventAt: number | null = null;
  let endedAt: number | null = null;
  let lastEventAt = 0;
  const landedAt = new Map<string, number>();
  let commit: string | null = null;
  let branch: string | null = null;
  let snapshots = 0;
  let redSnapshots = 0;
  let failures = 0;
  let bisects = 0;
  let blocked: string | null = null;
  let lastSnapshot: GreenSnapshot | null = null;
  const commitsBetweenGreen: number[] = [];
  let landedSinceAdvance: number | null = null;
  /** The earliest a red period may start: the run's start, then where the latest passing snapshot found main green. */
  let floor: number | null = null;
  let open: { start: number } | null = null;
  let closedMs = 0;
  let closedPeriods = 0;

  // A fold fed from the middle of a run (no `run.started`) counts from the first event it saw.
  const startOfRun = (): number => runStart ?? firstEventAt ?? 0;

  function checked(event: EventOf<'green.checked'>): void {
    const { data } = event;
    snapshots += 1;
    lastSnapshot = { commit: data.commit, passed: data.passed, at: event.ts, trigger: data.trigger };
    if (!data.passed) {
      redSnapshots += 1;
      open ??= { start: Math.max(event.ts, floor ?? event.ts) };
      return;
    }
    const greenAt = landedAt.get(data.commit) ?? event.ts;
    if (open !== null) {
      const end = Math.max(open.start, greenAt);
      closedMs += end - open.start;
      closedPeriods += 1;
      open = null;
      floor = end;
      return;
    }
    floor = Math.max(floor ?? greenAt, greenAt);
  }

  function bisected(event: EventOf<'green.bisected'>): void {
    bisects += 1;
    if (open === null) return;
    const { firstBad } = event.data;
    const brokeAt = firstBad === null ? startOfRun() : (landedAt.get(firstBad) ?? null);
    if (brokeAt === null) return;
    open.start = Math.min(open.start, Math.max(brokeAt, floor ?? brokeAt));
  }

  return {
    add(event) {
      firstEventAt ??= event.ts;
      lastEventAt = Math.max(lastEventAt, event.ts);
      switch (event.type) {
        case 'run.started':
          runStart ??= event.ts;
          floor ??= event.ts;
          return;
        case 'run.ended':
          endedAt = event.ts;
          return;
        case 'run.resumed':
          endedAt = null;
          return;
        case 'run.configured':
          if (event.data.settings.green !== undefined) {
            active = true;
            branch ??= event.data.settings.green.branch;
          }
          return;
        case 'merge.landed':
          landedAt.set(event.data.commit, event.ts);
          if (landedSinceAdvance !== null) landedSinceAdvance += 1;
          return;
        case 'green.checked':
          active = true;
          checked(event);
          return;
        case 'green.bisected':
          active = true;
          bisected(event);
          return;
        case 'green.reported':
          active = true;
          failures += 1;
          return;
        case 'green.advanced':
          active = true;
          branch = event.data.branch;
          commit = event.data.to;
          blocked = null;
          if (landedSinceAdvance !== null) commitsBetweenGreen.push(landedSinceAdvance);
          landedSinceAdvance = 0;
          return;
        case 'green.blocked':
          active = true;
          branch = event.data.branch;
          blocked = event.data.reason;
          return;
        default:
          // Every other event only moves the clock.
          return;
      }
    },
    get active() {
      return active;
    },
    result() {
      const start = startOfRun();
      const horizon = Math.max(start, endedAt ?? lastEventAt);
      const openMs = open === null ? 0 : Math.max(0, horizon - open.start);
      return {
        commit,
        branch,
        snapshots,
        redSnapshots,
        redShare: shareOf(Math.min(closedMs + openMs, horizon - start), horizon - start),
        meanTimeToGreenS: closedPeriods === 0 ? null : Math.round(closedMs / closedPeriods) / 1000,
        redNow: open !== null,
        since: open?.start ?? null,
        failures,
        bisects,
        commitsBetweenGreen: [...commitsBetweenGreen],
        lastSnapshot: lastSnapshot === null ? null : { ...lastSnapshot },
        blocked,
      };
    },
  };
}
