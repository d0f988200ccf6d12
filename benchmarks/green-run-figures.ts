import type { ColonyEvent } from '../src/events/event-types.js';
import { GREEN_FIXUP_OPENING } from '../src/protocol/message-openings.js';
import { brokenOnPurposePaths } from '../src/sim/reading/skip-tests-protocol.js';
import type { EventOf } from '../src/observe/event-of.js';

/** The event types the green figures are folded from: asking the log for these alone keeps a large run's read small. */
export const GREEN_FIGURE_EVENT_TYPES = [
  'run.started',
  'run.configured',
  'run.ended',
  'run.resumed',
  'agent.started',
  'merge.landed',
  'handoff.submitted',
  'message.received',
  'green.checked',
  'green.bisected',
  'green.reported',
  'green.advanced',
  'green.blocked',
] as const;

/** A commit the sim landed knowing a module in it was wrong: its own record of a break. */
export interface Break {
  readonly commit: string;
  readonly taskId: string;
  readonly paths: readonly string[];
}

/**
 * What a green-loop run did, folded from its events, with what the sim says it broke on purpose
 * held against what colony bisected and told. Counts, not verdicts: the bench says what it holds
 * itself to.
 */
export interface GreenRunFigures {
  readonly landed: number;
  readonly snapshots: number;
  readonly redSnapshots: number;
  readonly meanCheckMs: number | null;
  readonly bisects: number;
  /** Bisects of a failure already reported (the same first bad commit): no message went out for them. */
  readonly knownBisects: number;
  readonly meanBisectChecks: number | null;
  /** Distinct failures told to planners (`green.reported`), and the fix-up messages planners took in. */
  readonly reported: number;
  readonly fixupsReceived: number;
  /**
   * Commits landed on main before each move of the green branch since the move before, the run's
   * start counted as the first green point (`colony analyze` leaves that first gap out).
   */
  readonly commitsBetweenGreen: readonly number[];
  /** Commits landed after the green branch's last move: main ahead of green at the end. */
  readonly landedAfterLastGreen: number;
  readonly breaks: readonly Break[];
  /** Breaks that some bisect named as the first bad commit. */
  readonly matched: number;
  /** How many `green.reported` name each break's commit, in the order of `breaks`. */
  readonly reportsPerBreak: readonly number[];
  /** First bad commits bisected that are no break of the sim's (null: main failing at the start). */
  readonly otherFirstBad: readonly (string | null)[];
  readonly advanced: readonly { readonly from: string | null; readonly to: string }[];
  /** Moves of the green branch to a commit no passing snapshot checked. */
  readonly advancedToUnchecked: number;
  readonly blocked: readonly string[];
  /** The last snapshot with trigger `release`: whether it passed; null when there was none. */
  readonly releasePassed: boolean | null;
  /** Lines of the log worth reading: breaks not bisected or not told once, and bisects that blamed a commit that is no break. */
  readonly excerpts: readonly string[];
}

function ofType<T extends ColonyEvent['type']>(events: readonly ColonyEvent[], type: T): EventOf<T>[] {
  return events.filter((event): event is EventOf<T> => event.type === type);
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;
}

const short = (commit: string | null): string => (commit === null ? '(start)' : commit.slice(0, 12));

/**
 * The sim's breaks: for each handoff naming modules it wrote wrong on purpose, the commits its
 * task landed that touch one of those modules.
 */
function simBreaks(events: readonly ColonyEvent[]): Break[] {
  const landedByTask = new Map<string, EventOf<'merge.landed'>[]>();
  const taskOfAgent = new Map(ofType(events, 'agent.started').map((event) => [event.agentId, event.data.taskId]));
  for (const landed of ofType(events, 'merge.landed')) {
    const task = taskOfAgent.get(landed.agentId) ?? '';
    landedByTask.set(task, [...(landedByTask.get(task) ?? []), landed]);
  }
  return ofType(events, 'handoff.submitted').flatMap((event) => {
    const paths = brokenOnPurposePaths(event.data.handoff.notes);
    if (paths.length === 0) return [];
    return (landedByTask.get(event.data.taskId) ?? [])
      .filter((landed) => landed.data.files.some((file) => paths.includes(file)))
      .map((landed) => ({ commit: landed.data.commit, taskId: event.data.taskId, paths }));
  });
}

/** Commits landed between green points, in the log's order; the run's start is the first point. */
function landedBetweenGreen(events: readonly ColonyEvent[]): { gaps: number[]; after: number } {
  const gaps: number[] = [];
  let since = 0;
  for (const event of events) {
    if (event.type === 'merge.landed') since += 1;
    if (event.type === 'green.advanced') {
      gaps.push(since);
      since = 0;
    }
  }
  return { gaps, after: since };
}

export function greenRunFigures(events: readonly ColonyEvent[]): GreenRunFigures {
  const checks = ofType(events, 'green.checked');
  const bisected = ofType(events, 'green.bisected');
  const reported = ofType(events, 'green.reported');
  const breaks = simBreaks(events);
  const breakCommits = new Set(breaks.map((brokenCommit) => brokenCommit.commit));
  const bisectedFirstBad = new Set(bisected.map((event) => event.data.firstBad));
  const passing = new Set(checks.filter((event) => event.data.passed).map((event) => event.data.commit));
  const advanced = ofType(events, 'green.advanced').map((event) => ({ from: event.data.from, to: event.data.to }));
  const reportsPerBreak = breaks.map((brokenCommit) => reported.filter((event) => event.data.firstBad === brokenCommit.commit).length);
  const excerpts: string[] = [];
  breaks.forEach((brokenCommit, index) => {
    const told = reportsPerBreak[index] ?? 0;
    if (bisectedFirstBad.has(brokenCommit.commit) && told === 1) return;
    excerpts.push(`break ${short(brokenCommit.commit)} (task ${brokenCommit.taskId}, ${brokenCommit.paths.join(', ')}): ${bisectedFirstBad.has(brokenCommit.commit) ? 'bisected' : 'never bisected'}, told ${told} time(s)`);
  });
  const filesOf = new Map(ofType(events, 'merge.landed').map((event) => [event.data.commit, event.data.files]));
  for (const event of bisected.filter((bisect) => !breakCommits.has(bisect.data.firstBad ?? ''))) {
    const files = event.data.firstBad === null ? 'main at the start' : `a commit that changed ${(filesOf.get(event.data.firstBad) ?? ['files not recorded']).join(', ')}`;
    excerpts.push(
      `green.bisected ${short(event.data.firstBad)} (task ${event.data.taskId ?? '-'}, ${files}; ${event.data.checks} checks from ${short(event.data.good)}) for: ${event.data.failures.slice(0, 2).join(' | ')}`,
    );
  }
  const between = landedBetweenGreen(events);
  const releases = checks.filter((event) => event.data.trigger === 'release');
  return {
    landed: ofType(events, 'merge.landed').length,
    snapshots: checks.length,
    redSnapshots: checks.filter((event) => !event.data.passed).length,
    meanCheckMs: mean(checks.map((event) => event.data.durationMs)),
    bisects: bisected.length,
    knownBisects: bisected.filter((event) => event.data.known).length,
    meanBisectChecks: mean(bisected.map((event) => event.data.checks)),
    reported: reported.length,
    fixupsReceived: ofType(events, 'message.received').filter((event) => event.data.content.startsWith(GREEN_FIXUP_OPENING)).length,
    commitsBetweenGreen: between.gaps,
    landedAfterLastGreen: between.after,
    breaks,
    matched: breaks.filter((brokenCommit) => bisectedFirstBad.has(brokenCommit.commit)).length,
    reportsPerBreak,
    otherFirstBad: [...bisectedFirstBad].filter((commit) => commit === null || !breakCommits.has(commit)),
    advanced,
    advancedToUnchecked: advanced.filter((move) => !passing.has(move.to)).length,
    blocked: ofType(events, 'green.blocked').map((event) => `${short(event.data.commit)}: ${event.data.reason}`),
    releasePassed: releases.at(-1)?.data.passed ?? null,
    excerpts,
  };
}
