import { closeSync, writeSync } from 'node:fs';
import { HeadTailCapture } from './output-capture.js';
import type { SpillTarget } from './spill-directory.js';

/** What became of a command's output once it ended. */
export interface CollectedOutput {
  readonly output: string;
  readonly outputBytes: number;
  readonly truncated: boolean;
  /** The spill file as the command sees it, or null when nothing was spilled. */
  readonly spillPath: string | null;
  /** Bytes in the spill file: the whole output, or its start when the spill limit cut it. */
  readonly spillBytes: number;
}

/**
 * A command's output: the head and tail kept in memory for the result, and, once the output
 * outgrows them, all of it (up to the spill limit) in a file the agent can search. Output
 * that fits is never written to disk: until the capture overflows it is held in memory.
 * Writes are synchronous and bounded by the spill limit, so the order on disk is the order
 * of arrival and a fast writer cannot queue unbounded memory behind a slow disk.
 */
export class CommandOutput {
  private readonly capture: HeadTailCapture;
  private pending: Buffer[] = [];
  private fd: number | null = null;
  private spillBytes = 0;
  private spillStopped = false;
  private spillPath: string | null = null;

  constructor(
    private readonly maxOutputBytes: number,
    private readonly spill: SpillTarget | null,
  ) {
    this.capture = new HeadTailCapture(maxOutputBytes);
  }

  append(chunk: Buffer): void {
    this.capture.append(chunk);
    if (this.spill === null || this.spillStopped) return;
    if (this.fd === null) {
      this.pending.push(chunk);
      if (this.capture.totalBytes <= this.maxOutputBytes) return;
      const opened = this.spill.open();
      if (!opened.ok) {
        this.stopSpilling();
        return;
      }
      this.fd = opened.fd;
      this.spillPath = this.spill.visiblePath;
      const held = this.pending;
      this.pending = [];
      for (const piece of held) this.write(piece);
      return;
    }
    this.write(chunk);
  }

  /** Closes the spill file and renders the result; nothing is written after this. */
  finish(): CollectedOutput {
    this.stopSpilling();
    return {
      output: this.capture.render(),
      outputBytes: this.capture.totalBytes,
      truncated: this.capture.truncated,
      spillPath: this.spillPath,
      spillBytes: this.spillBytes,
    };
  }

  private write(chunk: Buffer): void {
    if (this.fd === null || this.spill === null) return;
    const room = this.spill.maxBytes - this.spillBytes;
    const piece = chunk.length <= room ? chunk : chunk.subarray(0, Math.max(room, 0));
    try {
      let offset = 0;
      while (offset < piece.length) offset += writeSync(this.fd, piece, offset, piece.length - offset);
      this.spillBytes += piece.length;
    } catch {
      // A full disk ends the spill; what was written stays readable and the result says how much.
      this.stopSpilling();
      return;
    }
    if (this.spillBytes >= this.spill.maxBytes) this.stopSpilling();
  }

  private stopSpilling(): void {
    this.spillStopped = true;
    this.pending = [];
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      // Closing a descriptor we opened only fails if it is already closed.
    }
    this.fd = null;
  }
}
