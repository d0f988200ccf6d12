import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit, splitNul } from '../git/git.js';
import type { Repository } from '../git/repository.js';

/** One landing of the run on its trunk, as `merge.landed` records it. */
export interface TrunkLanding {
  readonly commit: string;
  readonly mainBefore: string;
  readonly files: readonly string[];
}

/**
 * Someone other than colony moved the trunk so that landed work is gone from it: `moved`
 * when the trunk was moved to a commit that does not hold the commits landed before (a reset,
 * an amend, a forced move), `reverted` when a new commit on top undid landed files (typically
 * a commit made from an index that was not yet brought up to the landings).
 */
export interface TrunkMove {
  readonly kind: 'moved' | 'reverted';
  /** The commit the trunk was moved to (`moved`) or the commit that undid the files (`reverted`). */
  readonly commit: string;
  /** Where the trunk was before the move. */
  readonly previous: string;
  /** What git recorded of the move (`reset: moving to HEAD~2`, `commit (amend): …`). */
  readonly action: string;
  /** Landed commits no longer on the trunk (`moved`), or the landings whose files the commit undid (`reverted`). */
  readonly dropped: readonly string[];
  /** Landed files the commit put back as they were before their landing (`reverted`). */
  readonly files: readonly string[];
}

export interface TrunkWatch {
  /** Learns of a landing of the run, in the order they land. */
  landed(landing: TrunkLanding): void;
  /** The moves by others since the last look, read from the trunk's reflog; never throws. */
  check(): Promise<TrunkMove[]>;
  /** The last commit colony landed, or null before the first landing. */
  lastLanded(): string | null;
}

/** What colony writes in the reflog of every move of its own (`git update-ref -m "colony: …"`). */
const COLONY_MESSAGE = /^colony: /;

/**
 * Watches the trunk's reflog from now on for moves that drop landed work. colony moves the
 * trunk only forward and says so in each reflog entry; every other entry is a person's or
 * another tool's, and is checked against what the run landed so far.
 */
export async function startTrunkWatch(repo: Repository, earlier: readonly TrunkLanding[] = []): Promise<TrunkWatch> {
  const reflog = join(repo.gitDir, 'logs', 'refs', 'heads', repo.mainBranch);
  let offset = await sizeOf(reflog);
  const landings: TrunkLanding[] = [...earlier];
  const landedCommits = new Set(earlier.map((landing) => landing.commit));
  return {
    landed(landing) {
      landings.push(landing);
      landedCommits.add(landing.commit);
    },
    lastLanded: () => landings.at(-1)?.commit ?? null,
    async check() {
      try {
        const read = await readFrom(reflog, offset);
        offset = read.offset;
        const moves: TrunkMove[] = [];
        for (const entry of read.entries) {
          if (COLONY_MESSAGE.test(entry.message) || entry.old === entry.next || landings.length === 0) continue;
          moves.push(...(await judgeMove(repo, entry, landings, landedCommits)));
        }
        return moves;
      } catch {
        // A reflog that cannot be read (switched off, rotated) hides moves; it never stops a run.
        return [];
      }
    },
  };
}

interface ReflogEntry {
  readonly old: string;
  readonly next: string;
  readonly message: string;
}

async function judgeMove(repo: Repository, entry: ReflogEntry, landings: readonly TrunkLanding[], landedCommits: ReadonlySet<string>): Promise<TrunkMove[]> {
  if (!(await isAncestor(repo, entry.old, entry.next))) {
    const lost = await runGit(repo.root, ['rev-list', entry.old, '--not', entry.next]);
    const dropped = lost.stdout.split('\n').filter((commit) => landedCommits.has(commit));
    if (dropped.length === 0) return [];
    return [{ kind: 'moved', commit: entry.next, previous: entry.old, action: entry.message, dropped, files: [] }];
  }
  const added = await runGit(repo.root, ['rev-list', '--reverse', entry.next, '--not', entry.old]);
  const moves: TrunkMove[] = [];
  for (const commit of added.stdout.split('\n').filter((line) => line !== '' && !landedCommits.has(line))) {
    const { files, undid } = await revertedFiles(repo, commit, landings);
    if (files.length > 0) moves.push({ kind: 'reverted', commit, previous: entry.old, action: entry.message, dropped: undid, files });
  }
  return moves;
}

/**
 * The files `commit` changed back to what they were before the landing that last changed
 * them, and those landings: a landing on its first parent's line touched each, and the
 * commit's version is that landing's `mainBefore` version (both absent counts as the same).
 */
async function revertedFiles(repo: Repository, commit: string, landings: readonly TrunkLanding[]): Promise<{ files: string[]; undid: string[] }> {
  const changed = await runGit(repo.root, ['diff-tree', '--no-commit-id', '-r', '-z', '--name-only', '--no-renames', `${commit}^`, commit]);
  if (changed.code !== 0) return { files: [], undid: [] };
  const files: string[] = [];
  const undid = new Set<string>();
  for (const file of splitNul(changed.stdout)) {
    for (const landing of [...landings].reverse()) {
      if (!landing.files.includes(file) || !(await isAncestor(repo, landing.commit, `${commit}^`))) continue;
      if ((await blobOf(repo, commit, file)) === (await blobOf(repo, landing.mainBefore, file))) {
        files.push(file);
        undid.add(landing.commit);
      }
      break;
    }
  }
  return { files, undid: [...undid] };
}

async function isAncestor(repo: Repository, ancestor: string, descendant: string): Promise<boolean> {
  return (await runGit(repo.root, ['merge-base', '--is-ancestor', ancestor, descendant])).code === 0;
}

async function blobOf(repo: Repository, commit: string, file: string): Promise<string | null> {
  const result = await runGit(repo.root, ['rev-parse', '--verify', '--quiet', `${commit}:${file}`]);
  return result.code === 0 ? result.stdout.trim() : null;
}

async function sizeOf(path: string): Promise<number> {
  try {
    const handle = await open(path, 'r');
    try {
      return (await handle.stat()).size;
    } finally {
      await handle.close();
    }
  } catch {
    return 0;
  }
}

/** The whole lines of the reflog after `offset`, and where the next read starts. */
async function readFrom(path: string, offset: number): Promise<{ entries: ReflogEntry[]; offset: number }> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    // A reflog shorter than before was expired or rewritten: read it from the start.
    const start = size < offset ? 0 : offset;
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    const text = buffer.toString('utf8');
    const end = text.lastIndexOf('\n') + 1;
    const entries = text
      .slice(0, end)
      .split('\n')
      .filter((line) => line !== '')
      .map(parseEntry)
      .filter((entry): entry is ReflogEntry => entry !== null);
    return { entries, offset: start + Buffer.byteLength(text.slice(0, end)) };
  } finally {
    await handle.close();
  }
}

function parseEntry(line: string): ReflogEntry | null {
  const match = /^([0-9a-f]{40}) ([0-9a-f]{40}) [^\t]*\t?(.*)$/.exec(line);
  if (match === null) return null;
  return { old: match[1] ?? '', next: match[2] ?? '', message: match[3] ?? '' };
}

/** What of the run's landed work the trunk still lacks after the moves reported. */
export interface MissingWork {
  /** Dropped landed commits whose change is not on the trunk in any form (`git cherry`). */
  readonly commits: readonly string[];
  /** Reverted landed files the trunk still has as the reverting commit left them, with the commit to take them from (its parent). */
  readonly files: readonly { readonly source: string; readonly files: readonly string[] }[];
}

/**
 * Whether work the moves took off the trunk came back: a dropped commit counts as back when a
 * commit with the same change is on the trunk (later landings replay the commits their
 * workspaces were made on), a reverted file when the trunk no longer has it as the reverting
 * commit left it.
 */
export async function missingWork(repo: Repository, moves: readonly TrunkMove[]): Promise<MissingWork> {
  const tip = (await runGit(repo.root, ['rev-parse', '--verify', '--quiet', `refs/heads/${repo.mainBranch}`])).stdout.trim();
  const commits: string[] = [];
  const files: { source: string; files: string[] }[] = [];
  for (const move of moves) {
    if (move.kind === 'moved') {
      const cherry = await runGit(repo.root, ['cherry', tip, move.previous, move.commit]);
      const absent = new Set(cherry.stdout.split('\n').filter((line) => line.startsWith('+ ')).map((line) => line.slice(2)));
      commits.push(...move.dropped.filter((commit) => absent.has(commit) && !commits.includes(commit)));
      continue;
    }
    const undone: string[] = [];
    for (const file of move.files) if ((await blobOf(repo, tip, file)) === (await blobOf(repo, move.commit, file))) undone.push(file);
    const source = (await runGit(repo.root, ['rev-parse', `${move.commit}^`])).stdout.trim();
    if (undone.length > 0) files.push({ source, files: undone });
  }
  return { commits, files };
}

/**
 * Puts back on the trunk the files `move` (a `reverted` one) undid, as they were on its
 * parent, by a commit of colony's on top: only files the trunk still has as the reverting
 * commit left them (a later change is someone's), by a compare-and-swap on the tip, tried again
 * when a landing moved it meanwhile. The commit, or null when nothing was left to put back.
 */
export async function putBackFiles(repo: Repository, move: TrunkMove, message: string): Promise<string | null> {
  const ref = `refs/heads/${repo.mainBranch}`;
  const index = join(repo.gitDir, 'colony-put-back-index');
  const env = { GIT_INDEX_FILE: index };
  try {
    return await putBackOnTip(repo, move, message, ref, env);
  } finally {
    await rm(index, { force: true });
  }
}

async function putBackOnTip(repo: Repository, move: TrunkMove, message: string, ref: string, env: Record<string, string>): Promise<string | null> {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const tip = (await runGit(repo.root, ['rev-parse', '--verify', '--quiet', ref])).stdout.trim();
    const files: string[] = [];
    for (const file of move.files) if ((await blobOf(repo, tip, file)) === (await blobOf(repo, move.commit, file))) files.push(file);
    if (files.length === 0) return null;
    if ((await runGit(repo.root, ['read-tree', tip], { env })).code !== 0) return null;
    for (const file of files) {
      const entry = (await runGit(repo.root, ['ls-tree', '-z', `${move.commit}^`, '--', file])).stdout;
      const match = /^(\d+) blob ([0-9a-f]+)\t/.exec(entry);
      const args = match === null ? ['update-index', '--force-remove', '--', file] : ['update-index', '--add', '--cacheinfo', `${match[1]},${match[2]},${file}`];
      if ((await runGit(repo.root, args, { env })).code !== 0) return null;
    }
    const tree = (await runGit(repo.root, ['write-tree'], { env })).stdout.trim();
    const commit = (await runGit(repo.root, ['commit-tree', tree, '-p', tip, '-m', message])).stdout.trim();
    if (commit === '') return null;
    const swapped = await runGit(repo.root, ['update-ref', '-m', `colony: ${message.split('\n')[0] ?? ''}`, ref, commit, tip]);
    if (swapped.code === 0) return commit;
  }
  return null;
}
