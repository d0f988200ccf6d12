/** One measured figure of a benchmark, as `colony bench` prints and records it. */
export interface BenchRow {
  /** What was measured, e.g. "event log: colony append + flush every 100". */
  name: string;
  value: number;
  /** The unit of `value`, e.g. "events/s". */
  unit: string;
  /** The figure the project holds itself to, e.g. "≥ 50,000 events/s". */
  target?: string;
  /** How it was measured, so a reader can judge the figure. */
  note?: string;
}

/** What a suite returns: its rows, and optionally Markdown written under the rows' table (a table of its own, notes). */
export interface BenchSection {
  readonly rows: BenchRow[];
  readonly details?: string;
}

/** Settings from `npm run bench -- <suites> [--seconds S] [--mergers 1,4,16] [--runs N]`, for the suites that take them. */
export interface BenchSettings {
  /** How many times each measured thing is repeated. */
  readonly runs?: number;
  /** How long each timed run lasts. */
  readonly seconds?: number;
  /** Which concurrencies to run. */
  readonly mergers?: readonly number[];
}

/** The figures of `measure` run `times` times, one after another. */
export async function repeat(times: number, measure: () => Promise<number>): Promise<number[]> {
  const figures: number[] = [];
  for (let index = 0; index < times; index += 1) figures.push(await measure());
  return figures;
}

/** The middle figure (the upper of the two middle ones for an even count); 0 for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
