/** Where a bisection ended: the first bad index, and the indexes it had to check to get there. */
export interface BisectResult {
  /** The index of the first bad item. */
  readonly firstBad: number;
  /** The indexes `isBad` was asked about, in the order their answers came back; never one twice. */
  readonly checked: readonly number[];
}

export interface BisectOptions {
  /** How many indexes are checked at once; 1 is a plain binary search. */
  readonly parallel: number;
  /** Answers already known (true for bad), used instead of asking `isBad`. */
  readonly known?: ReadonlyMap<number, boolean>;
}

/**
 * Finds the first bad one of `count` items in order (commits, oldest first), taking bad to stay
 * bad once it appears: the item before index 0 is known good and index `count - 1` is known bad,
 * so neither is checked. Each round checks up to `parallel` evenly spaced indexes of the part
 * still open, all at once (a check is a whole run of a project's tests, so spare cores shorten
 * the search), and goes on between the last good and the first bad of them. `isBad` is never
 * asked about an index twice, nor about one `known` answers. When it throws, the error
 * propagates once the checks of its round have settled, so none is left running.
 */
export async function bisectFirstBad(count: number, isBad: (index: number) => Promise<boolean>, options: BisectOptions): Promise<BisectResult> {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`bisectFirstBad needs at least one item, got ${count}`);
  if (!Number.isInteger(options.parallel) || options.parallel < 1) throw new RangeError(`bisectFirstBad needs parallel of at least 1, got ${options.parallel}`);
  // Between `good` and `bad`, both excluded, lies what is still open; -1 is the item before the first.
  let good = -1;
  let bad = count - 1;
  const known = options.known ?? new Map<number, boolean>();
  for (const [index, isKnownBad] of known) {
    if (isKnownBad && index >= 0 && index < bad) bad = index;
  }
  for (const [index, isKnownBad] of known) {
    if (!isKnownBad && index > good && index < bad) good = index;
  }
  const checked: number[] = [];
  while (bad - good > 1) {
    const probes = evenlySpaced(good, bad, options.parallel);
    const answers = await Promise.allSettled(
      probes.map(async (index) => {
        const answer = known.get(index) ?? (await isBad(index));
        if (!known.has(index)) checked.push(index);
        return answer;
      }),
    );
    const failed = answers.find((answer): answer is PromiseRejectedResult => answer.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const results = answers.map((answer) => (answer as PromiseFulfilledResult<boolean>).value);
    const firstBadProbe = results.indexOf(true);
    const limit = firstBadProbe === -1 ? probes.length : firstBadProbe;
    if (firstBadProbe !== -1) bad = probes[firstBadProbe] ?? bad;
    for (let probe = limit - 1; probe >= 0; probe -= 1) {
      if (results[probe] === false) {
        good = probes[probe] ?? good;
        break;
      }
    }
  }
  return { firstBad: bad, checked };
}

/**
 * Up to `parallel` distinct indexes strictly between `good` and `bad`, in order, splitting the
 * gap into equal parts: with one, the middle.
 */
function evenlySpaced(good: number, bad: number, parallel: number): number[] {
  const gap = bad - good;
  const take = Math.min(parallel, gap - 1);
  // The step gap / (take + 1) is at least 1, so the floors are distinct and inside the gap.
  return Array.from({ length: take }, (_, probe) => good + Math.floor(((probe + 1) * gap) / (take + 1)));
}
