/**
 * Resolving git conflict markers the way a careful worker would. In each hunk the side before
 * `=======` is main's and the side after is this worker's (a diff3 base section is dropped).
 */

export type ResolutionStrategy = 'union-of-lines' | 'this-worker-side';

export function hasConflictMarkers(text: string): boolean {
  return /^<{7}(?: |$)/m.test(text) && /^>{7}(?: |$)/m.test(text);
}

/** Lines that stand alone: re-exports, imports and list items. Keeping both sides is right for them. */
const ONE_LINE_ENTRY = [
  /^\s*(?:import|export)\b.*\bfrom\s+['"][^'"]+['"];?\s*$/,
  /^\s*import\s+['"][^'"]+['"];?\s*$/,
  /^\s*[-*+]\s+\S.*$/,
];

function isOneLineEntry(line: string): boolean {
  return line.trim().length === 0 || ONE_LINE_ENTRY.some((pattern) => pattern.test(line));
}

/**
 * The index, or any file whose conflicting lines are all one-line entries, keeps the union of
 * both sides; anything else takes this worker's side.
 */
export function strategyFor(path: string, text: string, indexPath: string): ResolutionStrategy {
  if (path === indexPath) return 'union-of-lines';
  const hunks = parseConflicts(text).filter((part): part is Hunk => part.kind === 'hunk');
  const allEntries = hunks.every((hunk) => [...hunk.main, ...hunk.ours].every(isOneLineEntry));
  return hunks.length > 0 && allEntries ? 'union-of-lines' : 'this-worker-side';
}

interface Hunk {
  readonly kind: 'hunk';
  readonly main: readonly string[];
  readonly ours: readonly string[];
}

type Part = { readonly kind: 'line'; readonly line: string } | Hunk;

function parseConflicts(text: string): Part[] {
  const parts: Part[] = [];
  let hunk: { main: string[]; ours: string[]; side: 'main' | 'base' | 'ours' } | null = null;
  for (const line of text.split('\n')) {
    if (hunk === null) {
      if (/^<{7}(?: |$)/.test(line)) hunk = { main: [], ours: [], side: 'main' };
      else parts.push({ kind: 'line', line });
      continue;
    }
    if (/^\|{7}(?: |$)/.test(line)) hunk.side = 'base';
    else if (/^={7}$/.test(line)) hunk.side = 'ours';
    else if (/^>{7}(?: |$)/.test(line)) {
      parts.push({ kind: 'hunk', main: hunk.main, ours: hunk.ours });
      hunk = null;
    } else if (hunk.side === 'main') hunk.main.push(line);
    else if (hunk.side === 'ours') hunk.ours.push(line);
  }
  // An unterminated hunk is kept as this worker's side rather than lost.
  if (hunk !== null) parts.push({ kind: 'hunk', main: hunk.main, ours: hunk.ours });
  return parts;
}

/** The file with every conflict hunk replaced by its resolution. */
export function resolveConflicts(text: string, strategy: ResolutionStrategy): string {
  const parts = parseConflicts(text);
  const outside = new Set(
    parts.flatMap((part) => (part.kind === 'line' && part.line.trim().length > 0 ? [part.line] : [])),
  );
  const lines: string[] = [];
  for (const part of parts) {
    if (part.kind === 'line') {
      lines.push(part.line);
    } else if (strategy === 'this-worker-side') {
      lines.push(...part.ours);
    } else {
      const kept = new Set<string>();
      for (const line of [...part.main, ...part.ours]) {
        const blank = line.trim().length === 0;
        if (blank && lines[lines.length - 1]?.trim() === '') continue;
        if (!blank && (kept.has(line) || outside.has(line))) continue;
        kept.add(line);
        lines.push(line);
      }
    }
  }
  return lines.join('\n');
}
