import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** The file every merger may add a line to; concurrent additions are real textual conflicts for git. */
export const SHARED_FILE = 'shared/registry.txt';

/** The shared file's first line; lines inserted "near the top" go right after it. */
export const SHARED_HEADER = '# registry: one line per change';

/**
 * Lines between the header and the first appended line, so that an insertion near the top and
 * an append at the end never touch the same lines (git would call that a conflict).
 */
export const SHARED_PADDING_LINES = 10;

/**
 * One change a merger makes: a new file of its own, or one unique line in the shared file,
 * appended at the end (a conflict colony settles mechanically) or inserted after the header
 * (a change in the middle of the file: a conflict that reaches the agent).
 */
export type PlannedChange =
  | { readonly kind: 'file'; readonly merger: number; readonly number: number; readonly path: string; readonly text: string }
  | { readonly kind: 'line'; readonly merger: number; readonly number: number; readonly line: string; readonly position: 'end' | 'after-header' };

export interface ChangeMix {
  /** The chance that a change touches the shared file. */
  readonly shared: number;
  /** Of the shared-file changes, the chance that one inserts its line after the header instead of appending it. */
  readonly insertShare: number;
}

/** Decides merger `merger`'s change number `number` from its own random sequence. */
export function planChange(random: () => number, merger: number, number: number, mix: ChangeMix): PlannedChange {
  const name = `m${merger} c${number}`;
  if (random() >= mix.shared) return { kind: 'file', merger, number, path: `m${merger}/c${number}.txt`, text: `${name}\n` };
  const position = random() < mix.insertShare ? 'after-header' : 'end';
  return { kind: 'line', merger, number, line: name, position };
}

/** The commit message of a change. */
export function changeMessage(change: PlannedChange): string {
  if (change.kind === 'file') return `Add ${change.path}`;
  return `${change.position === 'end' ? 'Append' : 'Insert'} "${change.line}" in ${SHARED_FILE}`;
}

/** Makes the change in the worktree at `root`, as an agent's edit would. */
export async function applyChange(root: string, change: PlannedChange): Promise<void> {
  if (change.kind === 'file') {
    const path = join(root, change.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, change.text);
    return;
  }
  const path = join(root, SHARED_FILE);
  const lines = (await readFile(path, 'utf8')).split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (change.position === 'end') lines.push(change.line);
  else lines.splice(1, 0, change.line);
  await writeFile(path, `${lines.join('\n')}\n`);
}

/** Whether `line` of the shared file is one a merger added (not the header or the padding). */
export function isChangeLine(line: string): boolean {
  return /^m\d+ c\d+$/.test(line);
}

/** The first contents of the shared file. */
export function initialSharedText(): string {
  const padding = Array.from({ length: SHARED_PADDING_LINES }, (_, index) => `seed entry ${index + 1}`);
  return `${[SHARED_HEADER, ...padding].join('\n')}\n`;
}
