/**
 * The `limit` greatest items seen, by `before` (negative when `a` ranks above `b`), in rank
 * order. It holds at most `limit` items however many are added, so a fold over millions of
 * events keeps its leaders and nothing else.
 */
export interface TopList<T> {
  add(item: T): void;
  /** A fresh copy, in rank order. */
  items(): T[];
}

export function createTopList<T>(limit: number, before: (a: T, b: T) => number): TopList<T> {
  const kept: T[] = [];
  return {
    add(item) {
      if (kept.length >= limit) {
        const last = kept[kept.length - 1];
        if (last !== undefined && before(item, last) >= 0) return;
      }
      // Insert after every item that ranks at least as high: ties keep the order they came in.
      let index = kept.length;
      while (index > 0 && before(item, kept[index - 1] as T) < 0) index -= 1;
      kept.splice(index, 0, item);
      if (kept.length > limit) kept.pop();
    },
    items: () => [...kept],
  };
}

/** The nearest-rank percentile (`fraction` from 0 to 1) of values sorted ascending; null for none. */
export function nearestRank(sorted: readonly number[], fraction: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(fraction * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? null;
}

/** part / whole, 0 when there is no whole; rounded to four places so JSON stays readable. */
export function shareOf(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000;
}

/** Sums of float prices drift (0.1 + 0.2); a millionth of a dollar is finer than any price. */
export function roundDollars(amount: number): number {
  return Math.round(amount * 1e6) / 1e6;
}
