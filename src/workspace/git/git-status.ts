import { describeFailure, runGit } from './git.js';
import type { GitPlace } from './git.js';

/** One entry of `git status --porcelain=v1 -z`. */
export interface StatusEntry {
  /** The index column: ' ' unchanged, or M, T, A, D, R, C, U, '?' (untracked), '!' (ignored). */
  readonly staged: string;
  /** The working-tree column, in the same letters. */
  readonly unstaged: string;
  /** The path relative to the top of the checkout, byte for byte (never quoted). */
  readonly path: string;
  /** Where a rename or copy (in either column) came from; null for every other change. */
  readonly renamedFrom: string | null;
}

export type StatusResult = { readonly ok: true; readonly entries: StatusEntry[] } | { readonly ok: false; readonly error: string };

export interface ReadStatusOptions {
  /** List untracked files one by one (`--untracked-files=all`); without it they are left out. */
  readonly untracked: boolean;
}

const ENTRY = /^([ MTADRCU?!])([ MTADRCU?!]) (.+)$/s;

function isRenameOrCopy(letter: string): boolean {
  return letter === 'R' || letter === 'C';
}

/**
 * Parses `git status --porcelain=v1 -z` output: `XY PATH\0`, where a rename or copy (R or C
 * in either column) is followed by `SOURCE\0`. Anything that does not fit that shape is an
 * error rather than a guess, so a caller never mistakes unreadable output for a clean tree.
 */
export function parsePorcelainStatus(output: string): StatusResult {
  if (output === '') return { ok: true, entries: [] };
  if (!output.endsWith('\0')) return { ok: false, error: 'git status output does not end with NUL; was it run with -z?' };
  const fields = output.slice(0, -1).split('\0');
  const entries: StatusEntry[] = [];
  for (let index = 0; index < fields.length; index += 1) {
    const field = fields[index] ?? '';
    const match = ENTRY.exec(field);
    if (match === null) return { ok: false, error: `git status printed an entry that is not "XY path": ${JSON.stringify(field)}` };
    const [, staged = '', unstaged = '', path = ''] = match;
    let renamedFrom: string | null = null;
    if (isRenameOrCopy(staged) || isRenameOrCopy(unstaged)) {
      index += 1;
      renamedFrom = fields[index] ?? '';
      if (renamedFrom === '') return { ok: false, error: `git status printed the rename ${JSON.stringify(field)} without its source path` };
    }
    entries.push({ staged, unstaged, path, renamedFrom });
  }
  return { ok: true, entries };
}

/**
 * What `git status` says is uncommitted in the checkout at `place`, ignored files left out.
 * Takes no optional locks, so it neither waits for nor blocks a git the user runs there. A
 * submodule (or a repository an agent made inside the checkout and committed) counts as changed
 * when its commit differs; git is not run inside it, where its own configuration would apply.
 */
export async function readStatus(place: GitPlace, options: ReadStatusOptions): Promise<StatusResult> {
  const untracked = options.untracked ? 'all' : 'no';
  const args = ['--no-optional-locks', 'status', '--porcelain=v1', '-z', `--untracked-files=${untracked}`, '--ignored=no', '--ignore-submodules=dirty'];
  const result = await runGit(place, args);
  if (result.code !== 0) return { ok: false, error: describeFailure(args, result) };
  return parsePorcelainStatus(result.stdout);
}
