import { closeSync, fchownSync, mkdirSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../../errors/error-message.js';

/** How many spill files an agent keeps; the oldest goes when one more is written. */
export const SPILL_FILES_KEPT = 20;

/** Where a command's full output goes once it outgrows the captured head and tail. */
export interface SpillTarget {
  /** The path a command sees, e.g. `/tmp/colony-output/cmd-7.log`; returned to the model. */
  readonly visiblePath: string;
  /** Bytes kept at most; the rest of the output is counted, not written. */
  readonly maxBytes: number;
  /** Creates the file and returns a descriptor open for writing, or why it could not. */
  open(): { ok: true; fd: number } | { ok: false; error: string };
}

export interface SpillDirectoryOptions {
  /** The directory on the host; created if missing. */
  readonly hostDirectory: string;
  /** The same directory as commands see it (the host path when they see the host's). */
  readonly visibleDirectory: string;
  /** Who may read the files, when the harness can give them away (it runs as root). */
  readonly owner: { readonly uid: number; readonly gid: number } | null;
  readonly maxBytes: number;
  readonly keep?: number;
}

/**
 * One agent's spill files, `cmd-N.log` numbered by command. A file is readable by the agent's
 * uid and no other (mode 0400, owned by that uid), and written only by the harness through
 * the descriptor it opened. The newest `keep` files stay; older ones are deleted.
 */
export class SpillDirectory {
  private sequence: number;
  private readonly existing: number[];
  private readonly keep: number;

  private constructor(private readonly options: SpillDirectoryOptions) {
    this.keep = options.keep ?? SPILL_FILES_KEPT;
    this.existing = readdirSync(options.hostDirectory)
      .map((name) => /^cmd-(\d+)\.log$/.exec(name)?.[1])
      .filter((digits): digits is string => digits !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    // Numbers go on from the last file, so a new runner for the same agent overwrites nothing.
    this.sequence = this.existing.at(-1) ?? 0;
    this.prune();
  }

  /** Creates the directory (mode 0755) and reads which files it already holds. */
  static open(options: SpillDirectoryOptions): { ok: true; directory: SpillDirectory } | { ok: false; error: string } {
    try {
      mkdirSync(options.hostDirectory, { recursive: true, mode: 0o755 });
      return { ok: true, directory: new SpillDirectory(options) };
    } catch (error) {
      return { ok: false, error: `could not make the output spill directory ${options.hostDirectory}: ${errorMessage(error)}` };
    }
  }

  /** The spill target for the next command; nothing is created until output outgrows the capture. */
  next(): SpillTarget {
    this.sequence += 1;
    const number = this.sequence;
    const name = `cmd-${number}.log`;
    return {
      visiblePath: join(this.options.visibleDirectory, name),
      maxBytes: this.options.maxBytes,
      open: () => this.create(number, join(this.options.hostDirectory, name)),
    };
  }

  private create(number: number, path: string): { ok: true; fd: number } | { ok: false; error: string } {
    let fd: number | undefined;
    try {
      fd = openSync(path, 'w', 0o400);
      if (this.options.owner !== null) fchownSync(fd, this.options.owner.uid, this.options.owner.gid);
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      return { ok: false, error: errorMessage(error) };
    }
    this.existing.push(number);
    this.prune();
    return { ok: true, fd };
  }

  private prune(): void {
    while (this.existing.length > this.keep) {
      const oldest = this.existing.shift();
      try {
        unlinkSync(join(this.options.hostDirectory, `cmd-${oldest}.log`));
      } catch {
        // Already gone: nothing to prune.
      }
    }
  }
}

