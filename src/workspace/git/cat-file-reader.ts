import { setKeepsProcessAlive, spawnGit } from './git.js';
import type { ObjectType } from './git-objects.js';

export type ReadObject = { readonly type: ObjectType; readonly content: Buffer } | null;

interface PendingRead {
  readonly oid: string;
  readonly resolve: (value: ReadObject) => void;
  readonly reject: (error: Error) => void;
}

/**
 * One `git cat-file --batch` child and the reads sent to it: requests go down its stdin in
 * order and answers come back in the same order. Everything here belongs to this one child,
 * so a child that was closed or died can never answer a request sent to its successor.
 */
class CatFileSession {
  readonly child: ReturnType<typeof spawnGit>;
  private readonly pending: PendingRead[] = [];
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes needed before the next answer can be complete (a header first, then its object). */
  private needed = 1;
  private ended: string | null = null;

  constructor(
    cwd: string,
    private readonly onEnd: (session: CatFileSession) => void,
  ) {
    this.child = spawnGit(cwd, ['cat-file', '--batch']);
    let stderr = '';
    this.child.stdout.on('data', (chunk: Buffer) => {
      if (this.ended !== null) return;
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      if (this.buffered >= this.needed) this.drain();
    });
    this.child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    this.child.stdin.on('error', () => undefined);
    this.child.on('error', (error) => this.end(error.message));
    this.child.on('close', (code, signal) => this.end(stderr.trim() || `exit ${code ?? signal ?? 'unknown'}`));
    // Idle, the reader must not keep the process alive on its own.
    setKeepsProcessAlive(this.child, false);
  }

  read(oid: string): Promise<ReadObject> {
    if (this.ended !== null) return Promise.reject(new Error(`git cat-file stopped: ${this.ended}`));
    return new Promise((resolve, reject) => {
      this.pending.push({ oid, resolve, reject });
      if (this.pending.length === 1) setKeepsProcessAlive(this.child, true);
      this.child.stdin.write(`${oid}\n`);
    });
  }

  /** Stops the child; reads still waiting on it fail (their callers may read again). */
  end(reason: string): void {
    if (this.ended !== null) return;
    this.ended = reason;
    this.onEnd(this);
    for (const request of this.pending.splice(0)) request.reject(new Error(`git cat-file stopped: ${reason}`));
    this.chunks.length = 0;
    setKeepsProcessAlive(this.child, false);
    this.child.stdin.end();
    this.child.kill();
  }

  /** One contiguous buffer of what arrived, made only once enough has arrived to use it. */
  private takeBuffer(): Buffer {
    if (this.chunks.length > 1) {
      const whole = Buffer.concat(this.chunks);
      this.chunks.length = 0;
      this.chunks.push(whole);
    }
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  private drain(): void {
    let buffer = this.takeBuffer();
    let offset = 0;
    let needed = 1;
    for (;;) {
      const request = this.pending[0];
      const newline = buffer.indexOf(0x0a, offset);
      if (request === undefined || newline < 0) break;
      const header = buffer.toString('latin1', offset, newline);
      const [oid, type, sizeText] = header.split(' ');
      if (oid !== request.oid) {
        this.end(`answered ${JSON.stringify(header)} to a request for ${request.oid}`);
        return;
      }
      if (type === 'missing' || type === 'ambiguous') {
        offset = newline + 1;
        this.settle().resolve(null);
        continue;
      }
      const size = Number(sizeText);
      if (type === undefined || !Number.isInteger(size)) {
        this.end(`answered ${JSON.stringify(header)}`);
        return;
      }
      const end = newline + 1 + size;
      if (buffer.length < end + 1) {
        needed = end + 1 - offset;
        break;
      }
      const content = Buffer.from(buffer.subarray(newline + 1, end));
      offset = end + 1;
      this.settle().resolve({ type: type as ObjectType, content });
    }
    if (offset > 0) buffer = buffer.subarray(offset);
    this.chunks.length = 0;
    if (buffer.length > 0) this.chunks.push(buffer);
    this.buffered = buffer.length;
    this.needed = needed;
  }

  private settle(): PendingRead {
    const request = this.pending.shift();
    if (request === undefined) throw new Error('git cat-file answered a request nobody made');
    if (this.pending.length === 0) setKeepsProcessAlive(this.child, false);
    return request;
  }
}

/**
 * Reads objects of one repository through a long-lived `git cat-file --batch`, started on first
 * use and again after it ends. Its answers are checked against what was asked.
 */
export class CatFileReader {
  private session: CatFileSession | null = null;

  constructor(private readonly cwd: string) {}

  read(oid: string): Promise<ReadObject> {
    if (!/^[0-9a-f]{40}$/.test(oid)) return Promise.reject(new Error(`not an object id: ${JSON.stringify(oid)}`));
    if (this.session === null) {
      this.session = new CatFileSession(this.cwd, (ended) => {
        if (this.session === ended) this.session = null;
      });
    }
    return this.session.read(oid);
  }

  close(): void {
    this.session?.end('closed');
    this.session = null;
  }
}
