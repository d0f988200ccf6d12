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
