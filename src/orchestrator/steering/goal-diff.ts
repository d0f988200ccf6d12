/** The lines one text lost and the other gained: what changed in a goal file, line by line. */
export interface LineDiff {
  /** Lines of the old text that are not in the new one, in the old text's order. */
  readonly removed: readonly string[];
  /** Lines of the new text that were not in the old one, in the new text's order. */
  readonly added: readonly string[];
}

/**
 * Past this many cells (changed lines of the old text times changed lines of the new one) the
 * exact comparison would cost more memory than a goal edit is worth, and lines are compared as
 * two bags instead: moved lines then count as unchanged.
 */
const MAX_EXACT_CELLS = 1_000_000;

/**
 * Which lines were removed and added between two versions of a text: a longest common
 * subsequence of lines, after the common first and last lines are set aside (an edit usually
 * touches a few lines in one place, so what is left to compare is small). A final newline, or
 * its absence, is not a line of its own.
 */
export function diffLines(before: string, after: string): LineDiff {
  const old = linesOf(before);
  const next = linesOf(after);
  let start = 0;
  while (start < old.length && start < next.length && old[start] === next[start]) start += 1;
  let oldEnd = old.length;
  let nextEnd = next.length;
  while (oldEnd > start && nextEnd > start && old[oldEnd - 1] === next[nextEnd - 1]) {
    oldEnd -= 1;
    nextEnd -= 1;
  }
  const oldMiddle = old.slice(start, oldEnd);
  const nextMiddle = next.slice(start, nextEnd);
  if (oldMiddle.length === 0 || nextMiddle.length === 0) return { removed: oldMiddle, added: nextMiddle };
  if (oldMiddle.length * nextMiddle.length > MAX_EXACT_CELLS) return bagDiff(oldMiddle, nextMiddle);
  return exactDiff(oldMiddle, nextMiddle);
}

function linesOf(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** A longest common subsequence by dynamic programming, walked from the start to list what is not in it. */
function exactDiff(old: readonly string[], next: readonly string[]): LineDiff {
  const width = next.length + 1;
  // common[i * width + j]: the longest common subsequence of old[i..] and next[j..].
  const common = new Uint32Array((old.length + 1) * width);
  for (let i = old.length - 1; i >= 0; i -= 1) {
    for (let j = next.length - 1; j >= 0; j -= 1) {
      common[i * width + j] =
        old[i] === next[j] ? (common[(i + 1) * width + j + 1] ?? 0) + 1 : Math.max(common[(i + 1) * width + j] ?? 0, common[i * width + j + 1] ?? 0);
    }
  }
  const removed: string[] = [];
  const added: string[] = [];
  let i = 0;
  let j = 0;
  while (i < old.length && j < next.length) {
    if (old[i] === next[j]) {
      i += 1;
      j += 1;
    } else if ((common[(i + 1) * width + j] ?? 0) >= (common[i * width + j + 1] ?? 0)) {
      removed.push(old[i] ?? '');
      i += 1;
    } else {
      added.push(next[j] ?? '');
      j += 1;
    }
  }
  removed.push(...old.slice(i));
  added.push(...next.slice(j));
  return { removed, added };
}

/** Lines compared as bags: each line of one text cancels one equal line of the other. */
function bagDiff(old: readonly string[], next: readonly string[]): LineDiff {
  const remaining = new Map<string, number>();
  for (const line of old) remaining.set(line, (remaining.get(line) ?? 0) + 1);
  const added: string[] = [];
  for (const line of next) {
    const count = remaining.get(line) ?? 0;
    if (count > 0) remaining.set(line, count - 1);
    else added.push(line);
  }
  const removed: string[] = [];
  for (const line of old) {
    const count = remaining.get(line) ?? 0;
    if (count > 0) {
      removed.push(line);
      remaining.set(line, count - 1);
    }
  }
  return { removed, added };
}
