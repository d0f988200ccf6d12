import { createHash } from 'node:crypto';

/**
 * git's object formats, read and written in-process: trees and commits are tiny, and building
 * them here instead of in a git process per step is what keeps a merge to a few spawns.
 * SHA-1 repositories only; the caller checks the repository's object format first.
 *
 * Names and commit texts are held as binary strings (latin1: one character per byte), so a
 * file name or message that is not UTF-8 survives a rewrite byte for byte; `binaryText` and
 * `readableText` convert at the edges.
 */

/** A JS string as the binary string of its UTF-8 bytes. */
export function binaryText(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/** A binary string decoded as UTF-8, for messages and events. */
export function readableText(binary: string): string {
  return Buffer.from(binary, 'latin1').toString('utf8');
}

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

/** One entry of a tree: a file (100644, 100755), a symlink (120000), a subtree (40000) or a submodule (160000). */
export interface TreeEntry {
  readonly name: string;
  readonly mode: string;
  readonly oid: string;
}

export const TREE_MODE = '40000';

export function isTreeEntry(entry: TreeEntry): boolean {
  return entry.mode === TREE_MODE;
}

/** The object id git gives `content` of `type`: the SHA-1 of a header and the content. */
export function objectId(type: ObjectType, content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

/** Parses a tree object's content: `<mode> <name>\0<20-byte id>` repeated. */
export function parseTree(content: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let position = 0;
  while (position < content.length) {
    const space = content.indexOf(0x20, position);
    const nul = content.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw new Error('malformed tree object');
    entries.push({
      mode: content.toString('latin1', position, space),
      name: content.toString('latin1', space + 1, nul),
      oid: content.toString('hex', nul + 1, nul + 21),
    });
    position = nul + 21;
  }
  return entries;
}

/** git's order for tree entries: by name bytes, a subtree sorting as if its name ended in '/'. */
function sortKey(entry: TreeEntry): Buffer {
  return Buffer.from(isTreeEntry(entry) ? `${entry.name}/` : entry.name, 'latin1');
}

/** A tree object's content for `entries`, in git's order. */
export function serializeTree(entries: readonly TreeEntry[]): Buffer {
  const sorted = entries.map((entry) => ({ entry, key: sortKey(entry) })).sort((a, b) => Buffer.compare(a.key, b.key));
  return Buffer.concat(
    sorted.flatMap(({ entry }) => [Buffer.from(`${entry.mode} ${entry.name}\0`, 'latin1'), Buffer.from(entry.oid, 'hex')]),
  );
}

/** The parts of a commit object colony reads and writes, as binary strings. Headers it does not know are dropped when rewriting. */
export interface CommitObject {
  readonly tree: string;
  readonly parents: readonly string[];
  /** `Name <email> <seconds> <+hhmm>` as git writes it. */
  readonly author: string;
  readonly committer: string;
  /** The `encoding` header, when the message is not UTF-8. */
  readonly encoding?: string;
  readonly message: string;
}

export function parseCommit(content: Buffer): CommitObject {
  const text = content.toString('latin1');
  const split = text.indexOf('\n\n');
  const head = split < 0 ? text : text.slice(0, split);
  const message = split < 0 ? '' : text.slice(split + 2);
  const parents: string[] = [];
  let tree = '';
  let author = '';
  let committer = '';
  let encoding: string | undefined;
  for (const line of head.split('\n')) {
    // Continuation lines (a signature's body) start with a space and belong to a dropped header.
    if (line.startsWith(' ')) continue;
    const space = line.indexOf(' ');
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    if (key === 'tree') tree = value;
    else if (key === 'parent') parents.push(value);
    else if (key === 'author') author = value;
    else if (key === 'committer') committer = value;
    else if (key === 'encoding') encoding = value;
  }
  if (tree === '' || author === '' || committer === '') throw new Error('malformed commit object');
  return { tree, parents, author, committer, ...(encoding === undefined ? {} : { encoding }), message };
}

export function serializeCommit(commit: CommitObject): Buffer {
  const lines = [`tree ${commit.tree}`, ...commit.parents.map((parent) => `parent ${parent}`), `author ${commit.author}`, `committer ${commit.committer}`];
  if (commit.encoding !== undefined) lines.push(`encoding ${commit.encoding}`);
  return Buffer.from(`${lines.join('\n')}\n\n${commit.message}`, 'latin1');
}

/** An identity line as git writes it, `Name <email> <seconds> <+hhmm>`, at `time` in the local zone. */
export function identityLine(name: string, email: string, time: Date): string {
  const offsetMinutes = -time.getTimezoneOffset();
  const sign = offsetMinutes < 0 ? '-' : '+';
  const absolute = Math.abs(offsetMinutes);
  const zone = `${sign}${String(Math.floor(absolute / 60)).padStart(2, '0')}${String(absolute % 60).padStart(2, '0')}`;
  return `${name} <${email}> ${Math.floor(time.getTime() / 1000)} ${zone}`;
}
