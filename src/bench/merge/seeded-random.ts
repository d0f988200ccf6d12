/**
 * A deterministic source of numbers in [0, 1) (mulberry32): the same seed gives the same
 * sequence on every machine, so a bench run's choices can be replayed.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The seed of one merger's own sequence, so mergers do not share (and race for) one sequence. */
export function mergerSeed(seed: number, merger: number): number {
  return (Math.imul(seed >>> 0, 0x9e3779b1) + Math.imul(merger + 1, 0x85ebca6b)) >>> 0;
}
