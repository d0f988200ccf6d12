import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';

/**
 * A terminal of a fixed size with nobody at it, for drawing the terminal UI in a benchmark:
 * the output is thrown away (its last frame kept to check what was drawn), and keys are typed
 * by the benchmark.
 */
export interface FakeTerminal {
  readonly stdout: NodeJS.WriteStream;
  readonly stdin: NodeJS.ReadStream;
  /** Types one key, as a terminal in raw mode delivers it. */
  type(key: string): void;
  /** The latest text written, up to the last 64 KB. */
  screen(): string;
  /** Bytes written so far. */
  readonly bytesWritten: number;
}

const KEEP_CHARS = 64 * 1024;

class ScreenStream extends Writable {
  readonly isTTY = true;
  written = 0;
  last = '';

  constructor(
    readonly columns: number,
    readonly rows: number,
  ) {
    super({ decodeStrings: false });
  }

  override _write(chunk: unknown, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    const text = typeof chunk === 'string' ? chunk : String(chunk);
    this.written += text.length;
    this.last = (this.last + text).slice(-KEEP_CHARS);
    done();
  }
}

/** What Ink needs of a TTY's input: raw mode (a no-op here) and `readable` events with one key each. */
class KeyStream extends EventEmitter {
  readonly isTTY = true;
  private pending: string[] = [];
  setRawMode(): this {
    return this;
  }
  setEncoding(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  resume(): this {
    return this;
  }
  pause(): this {
    return this;
  }
  read(): string | null {
    return this.pending.shift() ?? null;
  }
  type(key: string): void {
    this.pending.push(key);
    this.emit('readable');
  }
}

export function fakeTerminal(columns: number, rows: number): FakeTerminal {
  const stdout = new ScreenStream(columns, rows);
  const stdin = new KeyStream();
  return {
    // Ink reads only these members of the streams; the casts say the fakes stand in for a TTY.
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    type: (key) => stdin.type(key),
    screen: () => stdout.last,
    get bytesWritten() {
      return stdout.written;
    },
  };
}
