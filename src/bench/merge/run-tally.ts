import type { PlannedChange } from './planned-change.js';

export type MergeBenchMode = 'self-merge' | 'integrator';

/** One change that reached main, `at` milliseconds after the run started. */
export interface Landing {
  readonly at: number;
  readonly change: PlannedChange;
}

/** Where one merger's time went, in milliseconds. */
export interface MergerTime {
  /** From the run's start until the merger stopped. */
  activeMs: number;
  /** Waiting for main: main's turn as mergeToMain reports it (`waitMs`), or the integrator's queue. */
  waitMs: number;
  /** From handing a change over (calling mergeToMain, or queueing it) until the call or the integrator answered. */
  handoverMs: number;
}

/** What a run counted while it went; `figuresOf` turns it into the reported figures. */
export interface RunTally {
  readonly landings: Landing[];
  /** Self-merge: attempts beyond the first, summed over landings. Integrator: failed ref updates. */
  retries: number;
  /** Textual conflicts colony settled itself (landings with `autoResolved` files). */
  resolvedMechanically: number;
  /** Textual conflicts that reached an agent (the merger's, or the integrator's), each costing resolve-ms. */
  resolvedByAgent: number;
  /** Merge calls that ended `failed` (or git steps of the integrator's design that failed), with the first few messages. */
  failedMerges: number;
  readonly failures: string[];
  readonly mergers: MergerTime[];
}

const FAILURES_KEPT = 10;

export function createTally(mergers: number): RunTally {
  return {
    landings: [],
    retries: 0,
    resolvedMechanically: 0,
    resolvedByAgent: 0,
    failedMerges: 0,
    failures: [],
    mergers: Array.from({ length: mergers }, () => ({ activeMs: 0, waitMs: 0, handoverMs: 0 })),
  };
}

export function recordFailure(tally: RunTally, message: string): void {
  tally.failedMerges += 1;
  if (tally.failures.length < FAILURES_KEPT) tally.failures.push(message);
}

/** What `colony bench merge --json` prints. Rates count landings within the run's window only. */
export interface MergeBenchFigures {
  readonly mode: MergeBenchMode;
  readonly mergers: number;
  /** F: the chance that a change touches the shared file. */
  readonly shared: number;
  readonly insertShare: number;
  readonly resolveMs: number;
  readonly seed: number;
  /** The length of the window the rates are measured over. */
  readonly seconds: number;
  /** Changes that landed within the window. */
  readonly landed: number;
  readonly commitsPerHour: number;
  /** The rate over the window's last quarter. */
  readonly lastQuarterPerHour: number;
  /** How many of the mergers landed at least once within the window. */
  readonly mergersLanded: number;
  readonly retriesPerCommit: number;
  /** Textual conflicts met: resolvedMechanically + resolvedByAgent. */
  readonly conflicts: number;
  readonly resolvedMechanically: number;
  readonly resolvedByAgent: number;
  /** The share of the mergers' time spent waiting to merge (see `waitSource`). */
  readonly waitShare: number;
  /** 'waitMs': time queued for main's turn, as mergeToMain reports it; 'queue': from queueing a change with the integrator until it is on main. */
  readonly waitSource: 'waitMs' | 'queue';
  /** The share of the mergers' time from handing a change over until it was on main (or handed back). */
  readonly handoverShare: number;
  readonly failedMerges: number;
  readonly failures: readonly string[];
  /** Changes that landed after the window closed (merges in flight at its end); they are checked, not counted. */
  readonly landedAfterWindow: number;
}

export interface RunSettings {
  readonly mode: MergeBenchMode;
  readonly shared: number;
  readonly insertShare: number;
  readonly resolveMs: number;
  readonly seed: number;
}

/** The figures of a run whose window was `windowMs` long. */
export function figuresOf(tally: RunTally, settings: RunSettings, windowMs: number): MergeBenchFigures {
  const inWindow = tally.landings.filter((landing) => landing.at <= windowMs);
  const lastQuarter = inWindow.filter((landing) => landing.at > windowMs * 0.75);
  const hours = windowMs / 3_600_000;
  const sum = (pick: (time: MergerTime) => number): number => tally.mergers.reduce((total, time) => total + pick(time), 0);
  const activeMs = sum((time) => time.activeMs);
  const share = (ms: number): number => (activeMs === 0 ? 0 : ms / activeMs);
  return {
    mode: settings.mode,
    mergers: tally.mergers.length,
    shared: settings.shared,
    insertShare: settings.insertShare,
    resolveMs: settings.resolveMs,
    seed: settings.seed,
    seconds: windowMs / 1000,
    landed: inWindow.length,
    commitsPerHour: inWindow.length / hours,
    lastQuarterPerHour: lastQuarter.length / (hours / 4),
    mergersLanded: new Set(inWindow.map((landing) => landing.change.merger)).size,
    retriesPerCommit: tally.landings.length === 0 ? 0 : tally.retries / tally.landings.length,
    conflicts: tally.resolvedMechanically + tally.resolvedByAgent,
    resolvedMechanically: tally.resolvedMechanically,
    resolvedByAgent: tally.resolvedByAgent,
    waitShare: share(sum((time) => time.waitMs)),
    waitSource: settings.mode === 'self-merge' ? 'waitMs' : 'queue',
    handoverShare: share(sum((time) => time.handoverMs)),
    failedMerges: tally.failedMerges,
    failures: [...tally.failures],
    landedAfterWindow: tally.landings.length - inWindow.length,
  };
}
