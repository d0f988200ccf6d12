import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { CatFileReader } from './cat-file-reader.js';
import { objectId, parseTree, serializeTree } from './git-objects.js';
import type { ObjectType, TreeEntry } from './git-objects.js';

/**
 * A repository's object database, as one long-lived `git cat-file --batch` for reading (any
 * object, loose or packed) and plain files for writing loose objects. Trees are immutable, so
 * parsed ones are kept: every merge reads the same few trees of main.
 */
export interface ObjectStore {
  /** The object's type and content, or null when the repository has no such object. */
  read(oid: string): Promise<{ readonly type: ObjectType; readonly content: Buffer } | null>;
  /** A tree's entries. Throws when the object is missing or not a tree. */
  readTree(oid: string): Promise<readonly TreeEntry[]>;
  /** Writes an object (if the repository lacks it) and returns its id. */
  write(type: ObjectType, content: Buffer): Promise<string>;
  writeTree(entries: readonly TreeEntry[]): Promise<string>;
  /** Stops the reader process; later reads start a new one. */
  close(): void;
}

const CACHE_LIMIT = 20_000;

class GitObjectStore implements ObjectStore {
  private readonly reader: CatFileReader;
  private readonly trees = new Map<string, readonly TreeEntry[]>();
  /** Commits this process wrote or read: main's new commits are read back by every merge. */
  private readonly commits = new Map<string, Buffer>();
  private readonly written = new Map<string, true>();
  private temporaryCounter = 0;

  constructor(
    cwd: string,
    private readonly objectsDir: string,
  ) {
    this.reader = new CatFileReader(cwd);
  }

  async read(oid: string): Promise<{ type: ObjectType; content: Buffer } | null> {
    const commit = this.commits.get(oid);
    if (commit !== undefined) return { type: 'commit', content: commit };
    const object = await this.reader.read(oid);
    if (object?.type === 'commit') this.remember(this.commits, oid, object.content);
    return object;
  }

  async readTree(oid: string): Promise<readonly TreeEntry[]> {
    const cached = this.trees.get(oid);
    if (cached !== undefined) return cached;
    const object = await this.read(oid);
    if (object === null || object.type !== 'tree') throw new Error(`${oid} is not a tree in this repository`);
    const entries = parseTree(object.content);
    this.remember(this.trees, oid, entries);
    return entries;
  }

  async writeTree(entries: readonly TreeEntry[]): Promise<string> {
    const oid = this.writeNow('tree', serializeTree(entries));
    this.remember(this.trees, oid, entries);
    return oid;
  }

  async write(type: ObjectType, content: Buffer): Promise<string> {
    return Promise.resolve(this.writeNow(type, content));
  }

  /**
   * Written synchronously on purpose: objects are small (a tree, a commit), and a merge holding
   * main's turn must not yield to the event loop for each file operation while other
   * merges are starting git processes.
   */
  private writeNow(type: ObjectType, content: Buffer): string {
    const oid = objectId(type, content);
    if (this.written.has(oid)) return oid;
    const directory = join(this.objectsDir, oid.slice(0, 2));
    const compressed = deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]), { level: 1 });
    // Written aside, then renamed into place: a reader never sees half an object. Replacing an
    // object that already exists is harmless, its id fixes its content.
    this.temporaryCounter += 1;
    const temporary = join(directory, `tmp_obj_colony_${process.pid}_${this.temporaryCounter}`);
    try {
      writeAside(directory, temporary, compressed);
      renameSync(temporary, join(directory, oid.slice(2)));
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
    this.remember(this.written, oid, true);
    if (type === 'commit') this.remember(this.commits, oid, content);
    return oid;
  }

  close(): void {
    this.reader.close();
  }

  /** Keeps `value` under `oid`, forgetting the oldest entry beyond the limit. */
  private remember<T>(cache: Map<string, T>, oid: string, value: T): void {
    if (cache.size >= CACHE_LIMIT) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
    cache.set(oid, value);
  }
}

/** Writes the temporary file, making its fan-out folder when it is missing (`git gc` removes empty ones). */
function writeAside(directory: string, temporary: string, data: Buffer): void {
  try {
    writeFileSync(temporary, data, { mode: 0o444 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(directory, { recursive: true });
    writeFileSync(temporary, data, { mode: 0o444 });
  }
}

/** An object store for the repository whose common git directory is `gitDir`; `cwd` is any directory git can run in for it. */
export function createObjectStore(cwd: string, gitDir: string): ObjectStore {
  return new GitObjectStore(cwd, join(gitDir, 'objects'));
}
