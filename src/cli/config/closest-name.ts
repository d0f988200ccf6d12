/**
 * The name in `names` closest to `given`, when it is close enough to be a slip of the keyboard
 * (a third of its letters wrong at most, and never more than three), or null.
 */
export function closestName(given: string, names: readonly string[]): string | null {
  const wanted = given.toLowerCase();
  let best: { name: string; distance: number } | null = null;
  for (const name of names) {
    const distance = editDistance(wanted, name.toLowerCase());
    if (best === null || distance < best.distance) best = { name, distance };
  }
  if (best === null) return null;
  return best.distance <= Math.min(3, Math.max(1, Math.floor(wanted.length / 3))) ? best.name : null;
}

/** Levenshtein's distance: the fewest letters put in, taken out or changed to turn one word into the other. */
function editDistance(from: string, to: string): number {
  let previous = Array.from({ length: to.length + 1 }, (_, index) => index);
  for (let row = 1; row <= from.length; row += 1) {
    const current = [row];
    for (let column = 1; column <= to.length; column += 1) {
      const changed = (previous[column - 1] ?? 0) + (from[row - 1] === to[column - 1] ? 0 : 1);
      current.push(Math.min(changed, (previous[column] ?? 0) + 1, (current[column - 1] ?? 0) + 1));
    }
    previous = current;
  }
  return previous[to.length] ?? 0;
}
