import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const MARKER = /^(<{7}|\|{7}|={7}|>{7})(?: |\r?\n?$)/;

/**
 * Resolves every conflict in `text` the way the bench's stand-in for an agent does: both
 * sides' lines are kept, main's first, and git's markers and the common base (in diff3
 * style) are dropped. Right for the bench's changes, which only ever add lines.
 */
export function keepBothSides(text: string): string {
  const kept: string[] = [];
  let section: 'outside' | 'ours' | 'base' | 'theirs' = 'outside';
  for (const line of text.split(/(?<=\n)/)) {
    const marker = MARKER.exec(line)?.[1]?.[0];
    if (marker === '<' && section === 'outside') section = 'ours';
    else if (marker === '|' && section === 'ours') section = 'base';
    else if (marker === '=' && (section === 'ours' || section === 'base')) section = 'theirs';
    else if (marker === '>' && section === 'theirs') section = 'outside';
    else if (section !== 'base') kept.push(line);
  }
  return kept.join('');
}

/** Applies `keepBothSides` to each of `files` (relative to `root`) in place. */
export async function keepBothSidesInFiles(root: string, files: readonly string[]): Promise<void> {
  for (const file of files) {
    const path = join(root, file);
    await writeFile(path, keepBothSides(await readFile(path, 'utf8')));
  }
}
