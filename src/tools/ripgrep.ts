import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { armDeadline } from '../sandbox/process/command-deadline.js';
import { errorMessage } from '../errors/error-message.js';

export interface RipgrepRequest {
  readonly ripgrepPath: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  /** Stop reading (and kill ripgrep) after this many output lines. */
  readonly maxLines: number;
  /** Stop reading (and kill ripgrep) before the output lines pass this many bytes. */
  readonly maxBytes: number;
}

export interface RipgrepRun {
  /** Whole output lines, without their newline. */
  readonly lines: readonly Buffer[];
  /** True when a limit stopped the run before ripgrep finished. */
  readonly capped: boolean;
  readonly exitCode: number | null;
  readonly stderr: Buffer;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  readonly startError: string | null;
}

const MAX_STDERR_BYTES = 4 * 1024;

/**
 * Runs ripgrep directly (no shell, fixed arguments, empty environment, stdin closed) and reads
 * its output line by line, stopping it as soon as a limit is reached. Never rejects.
 */
export function runRipgrep(request: RipgrepRequest): Promise<RipgrepRun> {
  const empty: RipgrepRun = {
    lines: [],
    capped: false,
    exitCode: null,
    stderr: Buffer.alloc(0),
    timedOut: false,
    aborted: request.signal.aborted,
    startError: null,
  };
  if (request.signal.aborted) return Promise.resolve(empty);
  let child: ChildProcess;
  try {
    child = spawn(request.ripgrepPath, request.args, { cwd: request.cwd, env: {}, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    return Promise.resolve({ ...empty, startError: errorMessage(error) });
  }
  return new Promise((resolve) => {
    const lines: Buffer[] = [];
    let lineBytes = 0;
    let pending = Buffer.alloc(0);
    let stderr = Buffer.alloc(0);
    let capped = false;
    let startError: string | null = null;

    const stop = (): void => {
      child.stdout?.removeAllListeners('data');
      child.kill('SIGKILL');
    };
    const deadline = armDeadline(request, stop);

    const takeLine = (line: Buffer): boolean => {
      if (lines.length >= request.maxLines || lineBytes + line.length + 1 > request.maxBytes) {
        capped = true;
        stop();
        return false;
      }
      lines.push(line);
      lineBytes += line.length + 1;
      return true;
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      let buffer = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (let newline = buffer.indexOf(0x0a); newline !== -1; newline = buffer.indexOf(0x0a)) {
        if (!takeLine(buffer.subarray(0, newline))) return;
        buffer = buffer.subarray(newline + 1);
      }
      pending = Buffer.from(buffer);
      // A line longer than the whole budget can never be taken; stop holding it.
      if (pending.length > request.maxBytes) {
        capped = true;
        stop();
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr = Buffer.concat([stderr, chunk]).subarray(0, MAX_STDERR_BYTES);
    });
    child.on('error', (error) => {
      if (child.pid === undefined) startError = error.message;
    });
    child.on('close', (code) => {
      deadline.dispose();
      const { timedOut, aborted } = deadline;
      if (!capped && !timedOut && !aborted && pending.length > 0) takeLine(pending);
      resolve({ lines, capped, exitCode: code, stderr, timedOut, aborted, startError });
    });
  });
}
