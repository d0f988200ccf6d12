import { describe, expect, it } from 'vitest';
import { bisectFirstBad } from './bisect.js';

/** A predicate over a history whose first bad index is `firstBad`, counting what it was asked. */
function history(firstBad: number): { isBad: (index: number) => Promise<boolean>; asked: number[] } {
  const asked: number[] = [];
  return {
    asked,
    isBad: async (index) => {
      asked.push(index);
      await Promise.resolve();
      return index >= firstBad;
    },
  };
}

function expectEachOnce(indexes: readonly number[]): void {
  expect(new Set(indexes).size).toBe(indexes.length);
}

describe('bisectFirstBad', () => {
  it('finds the first bad index of every history up to 40 long, with any parallelism, asking no index twice', async () => {
    for (let count = 1; count <= 40; count += 1) {
      for (let firstBad = 0; firstBad < count; firstBad += 1) {
        for (const parallel of [1, 2, 3, 4, 7]) {
          const { isBad, asked } = history(firstBad);
          const result = await bisectFirstBad(count, isBad, { parallel });
          expect(result.firstBad, `count ${count}, first bad ${firstBad}, parallel ${parallel}`).toBe(firstBad);
          expectEachOnce(asked);
          expect([...result.checked].sort((a, b) => a - b)).toEqual([...asked].sort((a, b) => a - b));
          // The last index is known bad, and the one before the first known good.
          expect(asked).not.toContain(count - 1);
          expect(asked.every((index) => index >= 0 && index < count)).toBe(true);
          if (parallel === 1) expect(asked.length).toBeLessThanOrEqual(Math.ceil(Math.log2(count)));
        }
      }
    }
  });

  it('asks nothing of a history of one, and one question of a history of two', async () => {
    const one = history(0);
    expect(await bisectFirstBad(1, one.isBad, { parallel: 1 })).toEqual({ firstBad: 0, checked: [] });
    expect(one.asked).toEqual([]);
    for (const firstBad of [0, 1]) {
      const two = history(firstBad);
      expect(await bisectFirstBad(2, two.isBad, { parallel: 3 })).toEqual({ firstBad, checked: [0] });
    }
  });

  it('takes about log2 questions on a long history', async () => {
    const count = 1_000_000;
    for (const firstBad of [0, 1, 499_999, 777_777, count - 2, count - 1]) {
      const { isBad, asked } = history(firstBad);
      const result = await bisectFirstBad(count, isBad, { parallel: 1 });
      expect(result.firstBad).toBe(firstBad);
      expect(asked.length).toBeLessThanOrEqual(20);
      expectEachOnce(asked);
      const parallel = history(firstBad);
      const wide = await bisectFirstBad(count, parallel.isBad, { parallel: 7 });
      expect(wide.firstBad).toBe(firstBad);
      expectEachOnce(parallel.asked);
      // Seven at a time split the range eightfold a round: at most ceil(log8(10^6)) = 7 rounds.
      expect(parallel.asked.length).toBeLessThanOrEqual(7 * 7);
    }
  });

  it('probes all the open indexes in one round when parallel is larger than the interval', async () => {
    const { isBad, asked } = history(2);
    const result = await bisectFirstBad(4, isBad, { parallel: 10 });
    expect(result.firstBad).toBe(2);
    expect([...asked].sort()).toEqual([0, 1, 2]);
  });

  it('probes evenly spaced indexes at once', async () => {
    // A round starts when a question is asked while none is open.
    const rounds: number[][] = [];
    let open = 0;
    const isBad = async (index: number): Promise<boolean> => {
      if (open === 0) rounds.push([]);
      open += 1;
      rounds[rounds.length - 1]?.push(index);
      await new Promise((resolve) => setTimeout(resolve, 0));
      open -= 1;
      return index >= 13;
    };
    const result = await bisectFirstBad(20, isBad, { parallel: 3 });
    expect(result.firstBad).toBe(13);
    // The gap from -1 to 19 is 20: probes at a quarter, half and three quarters of it.
    expect(rounds[0]).toEqual([4, 9, 14]);
    // Between the good 9 and the bad 14, four are open: three of them, then the one left.
    expect(rounds.slice(1)).toEqual([[10, 11, 12], [13]]);
  });

  it('uses known answers instead of asking, and narrows by them first', async () => {
    const { isBad, asked } = history(11);
    const known = new Map<number, boolean>([
      [3, false],
      [8, false],
      [15, true],
    ]);
    const result = await bisectFirstBad(20, isBad, { parallel: 1, known });
    expect(result.firstBad).toBe(11);
    expect(asked.every((index) => index > 8 && index < 15)).toBe(true);
    expect(asked.length).toBeLessThanOrEqual(3);
    expect(result.checked).toEqual(asked);
  });

  it('needs no question when the known answers already meet', async () => {
    const { isBad, asked } = history(6);
    const result = await bisectFirstBad(20, isBad, { parallel: 2, known: new Map([[5, false], [6, true]]) });
    expect(result).toEqual({ firstBad: 6, checked: [] });
    expect(asked).toEqual([]);
  });

  it('lists the checked indexes in the order their answers came back', async () => {
    const delays = new Map([
      [4, 30],
      [9, 10],
      [14, 20],
    ]);
    const isBad = (index: number): Promise<boolean> =>
      new Promise((resolve) => setTimeout(() => resolve(index >= 9), delays.get(index) ?? 0));
    const result = await bisectFirstBad(20, isBad, { parallel: 3 });
    expect(result.firstBad).toBe(9);
    expect(result.checked.slice(0, 3)).toEqual([9, 14, 4]);
  });

  it('passes an error of isBad on, after the other checks of its round settled', async () => {
    const settled: number[] = [];
    const isBad = (index: number): Promise<boolean> =>
      new Promise((resolve, reject) => {
        if (index === 4) {
          setTimeout(() => reject(new Error('the check could not run')), 0);
          return;
        }
        setTimeout(() => {
          settled.push(index);
          resolve(false);
        }, 20);
      });
    await expect(bisectFirstBad(20, isBad, { parallel: 3 })).rejects.toThrow('the check could not run');
    expect(settled.sort((a, b) => a - b)).toEqual([9, 14]);
  });

  it('refuses an empty history and a parallelism below one', async () => {
    const { isBad } = history(0);
    await expect(bisectFirstBad(0, isBad, { parallel: 1 })).rejects.toThrow(RangeError);
    await expect(bisectFirstBad(3, isBad, { parallel: 0 })).rejects.toThrow(RangeError);
  });
});
