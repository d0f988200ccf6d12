import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { setKeepsProcessAlive, spawnGit } from './git.js';
import { objectId, parseTree, serializeTree } from './git-objects.js';
import type { ObjectType, TreeEntry } from './git-objects.js';

/**
 * A repository's object database, as one long-lived `git cat-file --batch` for reading (any
 * object, loose or packed) and plain files for writing loose objects. Trees are immutable, so
 * parsed ones are kept: every merge reads the same few trees of the trunk.
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

interface PendingRead {
  readonly oid: string;
  readonly resolve: (value: { type: ObjectType; content: Buffer } | null) => void;
  readonly reject: (error: Error) => void;
}

const CACHE_LIMIT = 20_000;

/** The reading half: requests go down one pipe in order and answers come back in the same order. */
class BatchReader {
  private child: ReturnType<typeof spawnGit> | null = null;
  private readonly pending: PendingRead[] = [];
  private buffer: Buffer = Buffer.alloc(0);

  constructor(private readonly cwd: string) {}

  read(oid: string): Promise<{ type: ObjectType; content: Buffer } | null> {
    if (!/^[0-9a-f]{40}$/.test(oid)) return Promise.reject(new Error(`not an object id: ${JSON.stringify(oid)}`));
    const child = this.process();
    return new Promise((resolve, reject) => {
      this.pending.push({ oid, resolve, reject });
      if (this.pending.length === 1) this.setKeepsAlive(true);
      child.stdin.write(`${oid}\n`);
    });
  }

  close(): void {
    const child = this.child;
    this.child = null;
    if (child !== null) {
      child.stdin.end();
      child.kill();
    }
  }

  private process(): ReturnType<typeof spawnGit> {
    if (this.child !== null) return this.child;
    const child = spawnGit(this.cwd, ['cat-file', '--batch']);
    this.child = child;
    this.buffer = Buffer.alloc(0);
    child.stdout.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.drain();
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.stdin.on('error', () => undefined);
    const failAll = (reason: string): void => {
      if (this.child === child) this.child = null;
      const waiting = this.pending.splice(0);
      for (const request of waiting) request.reject(new Error(`git cat-file stopped: ${reason}`));
      this.setKeepsAlive(false, child);
    };
    child.on('error', (error) => failAll(error.message));
    child.on('exit', (code, signal) => failAll(stderr.trim() || `exit ${code ?? signal ?? 'unknown'}`));
    // Idle, the reader must not keep the process alive on its own.
    this.setKeepsAlive(false, child);
    return child;
  }

  /** Answers pending reads from whatever complete responses the buffer holds. */
  private drain(): void {
    for (;;) {
      const request = this.pending[0];
      if (request === undefined) return;
      const newline = this.buffer.indexOf(0x0a);
      if (newline < 0) return;
      const header = this.buffer.toString('latin1', 0, newline);
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        this.buffer = this.buffer.subarray(newline + 1);
        this.settle().resolve(null);
        continue;
      }
      const [, type, sizeText] = header.split(' ');
      const size = Number(sizeText);
      if (type === undefined || !Number.isInteger(size)) {
        this.close();
        this.settle().reject(new Error(`git cat-file answered ${JSON.stringify(header)}`));
        return;
      }
      const end = newline + 1 + size;
      if (this.buffer.length < end + 1) return;
      const content = Buffer.from(this.buffer.subarray(newline + 1, end));
      this.buffer = this.buffer.subarray(end + 1);
      this.settle().resolve({ type: type as ObjectType, content });
    }
  }

  private settle(): PendingRead {
    const request = this.pending.shift();
    if (request === undefined) throw new Error('git cat-file answered a request nobody made');
    if (this.pending.length === 0) this.setKeepsAlive(false);
    return request;
  }

  /** A read in flight keeps Node running until it is answered; an idle reader does not. */
  private setKeepsAlive(keep: boolean, child = this.child): void {
    if (child !== null) setKeepsProcessAlive(child, keep);
  }
}

class GitObjectStore implements ObjectStore {
  private readonly reader: BatchReader;
  private readonly trees = new Map<string, readonly TreeEntry[]>();
  /** Commits this process wrote or read: the trunk's new commits are read back by every merge. */
  private readonly commits = new Map<string, Buffer>();
  private readonly written = new Map<string, true>();
  private readonly madeDirectories = new Set<string>();
  private temporaryCounter = 0;

  constructor(
    cwd: string,
    private readonly objectsDir: string,
  ) {
    this.reader = new BatchReader(cwd);
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
   * the trunk's turn must not yield to the event loop for each file operation while other
   * merges are starting git processes.
   */
  private writeNow(type: ObjectType, content: Buffer): string {
    const oid = objectId(type, content);
    if (this.written.has(oid)) return oid;
    const directory = join(this.objectsDir, oid.slice(0, 2));
    const path = join(directory, oid.slice(2));
    if (!this.madeDirectories.has(directory)) {
      mkdirSync(directory, { recursive: true });
      this.madeDirectories.add(directory);
    }
    const compressed = deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]), { level: 1 });
    // Written aside, then renamed into place: a reader never sees half an object. Replacing an
    // object that already exists is harmless, its id fixes its content.
    this.temporaryCounter += 1;
    const temporary = join(directory, `tmp_obj_colony_${process.pid}_${this.temporaryCounter}`);
    try {
      writeFileSync(temporary, compressed, { mode: 0o444 });
      renameSync(temporary, path);
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

/** An object store for the repository whose common git directory is `gitDir`; `cwd` is any directory git can run in for it. */
export function createObjectStore(cwd: string, gitDir: string): ObjectStore {
  return new GitObjectStore(cwd, join(gitDir, 'objects'));
}
