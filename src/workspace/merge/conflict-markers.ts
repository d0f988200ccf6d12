import { readCheckoutFile } from '../files/confined-file.js';

/**
 * A line git writes into a conflicted file: seven '<', '|', '=' or '>' at the start of the
 * line, followed by a space and a label or by the end of the line. The same rule as
 * `git diff --check`, so a longer run such as a Markdown heading underline does not count.
 */
const MARKER_LINE = /^(?:<{7}|\|{7}|={7}|>{7})(?: |\r?$)/m;

/** Whether `text` still has a conflict marker at the start of any line. */
export function hasConflictMarkers(text: string): boolean {
  return MARKER_LINE.test(text);
}

/**
 * The files among `files` (paths relative to `root`) that still hold conflict markers. A
 * file that no longer exists, or is not a regular file, has none: deleting it is one way of
 * resolving a conflict. Nothing is read through a symbolic link (which git would not follow
 * either), so an agent cannot point colony at a file outside the checkout or at a pipe.
 */
export async function filesWithConflictMarkers(root: string, files: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const file of files) {
    const text = await readCheckoutFile(root, file);
    if (text !== null && hasConflictMarkers(text)) found.push(file);
  }
  return found;
}
