import { armDeadline } from '../process/command-deadline.js';
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { CommandCgroup } from '../cgroups/types.js';
import type { CommandOutput } from '../process/command-output.js';
import { DEFAULT_DRAIN_MS, DEFAULT_KILL_GRACE_MS } from '../process/process-runner.js';
import { errorMessage } from '../../errors/error-message.js';
import type { ProcessRequest } from '../process/types.js';

/** What the watcher saw of one confined command, before it is read into a ProcessResult. */
export interface ConfinedOutcome {
  /** The launcher's exit status (the confinement's, which passes the command's on). */
  readonly code: number | null;
  /** The signal that killed the launcher's process itself, or null. */
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  /** The command reported from inside its confinement (fd 3) before it ran. */
  readonly started: boolean;
  /** Signals the runner sent, in order. */
  readonly sentSignals: readonly NodeJS.Signals[];
  readonly outOfMemory: boolean;
  /** CPU its cgroup counted, read once everything in it was gone; null where it is not counted. */
  readonly cpuMs: number | null;
  readonly startError: string | null;
}

/**
 * Watches a launched confined command to its end and leaves nothing behind.
 *
 * On timeout or abort it sends SIGTERM to every process in the command's cgroup except the
 * launcher's own process (the confinement's monitor, which would otherwise die of it and
 * report SIGTERM for a command that ignores it), waits the grace, then kills the whole
 * cgroup. Before the command has reported itself started there is nothing to address in
 * the cgroup yet, so SIGTERM goes to the launcher's process, whose confinement then takes
 * everything inside down with it; a confinement that does not pass it on finishes its set-up,
 * and the command, once it reports itself started, is sent its SIGTERM then. Once the launcher's process exits, the cgroup is swept
 * (background children, `setsid` and `nohup` included), the out-of-memory record and the CPU
 * count are read, and the cgroup is removed; then the output pipes get a short drain.
 */
export function watchConfinedChild(
  child: ChildProcess,
  request: ProcessRequest,
  cgroup: CommandCgroup,
  output: CommandOutput,
): Promise<ConfinedOutcome> {
  const killGraceMs = request.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const drainMs = request.drainMs ?? DEFAULT_DRAIN_MS;
  return new Promise((resolve) => {
    let started = false;
    let exited = false;
    let closed = false;
    let finished = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
    let outOfMemory = false;
    let cpuMs: number | null = null;
    let startError: string | null = null;
    let statusText = '';
    const sentSignals: NodeJS.Signals[] = [];
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;

    const signalLauncher = (signal: NodeJS.Signals): void => {
      if (exited || child.pid === undefined) return;
      try {
        process.kill(child.pid, signal);
      } catch {
        // Gone already.
      }
    };
    const killEverything = (): void => {
      sentSignals.push('SIGKILL');
      signalLauncher('SIGKILL');
      void cgroup.kill();
    };
    const signalCommand = (): void => {
      sentSignals.push('SIGTERM');
      cgroup.signal('SIGTERM', child.pid === undefined ? [] : [child.pid]);
    };
    const stop = (): void => {
      if (exited || killTimer !== undefined) return;
      if (started) signalCommand();
      else {
        sentSignals.push('SIGTERM');
        signalLauncher('SIGTERM');
      }
      killTimer = setTimeout(killEverything, killGraceMs);
    };
    const deadline = armDeadline(request, stop);

    const finish = (): void => {
      if (finished) return;
      finished = true;
      deadline.dispose();
      clearTimeout(killTimer);
      clearTimeout(drainTimer);
      child.stdout?.destroy();
      child.stderr?.destroy();
      (child.stdio[3] as Readable | null | undefined)?.destroy();
      resolve({ ...exit, timedOut: deadline.timedOut, aborted: deadline.aborted, started, sentSignals, outOfMemory, cpuMs, startError });
    };
    const settle = async (): Promise<void> => {
      // The launcher is gone; whatever it left in the cgroup goes now, before the result.
      await cgroup.kill();
      outOfMemory = cgroup.outOfMemory();
      cpuMs = cgroup.cpuMs();
      await cgroup.remove();
      if (closed) finish();
      else drainTimer = setTimeout(finish, drainMs);
    };

    child.stdout?.on('data', (chunk: Buffer) => output.append(chunk));
    child.stderr?.on('data', (chunk: Buffer) => output.append(chunk));
    (child.stdio[3] as Readable | null | undefined)?.on('data', (chunk: Buffer) => {
      statusText += chunk.toString('utf8');
      if (started || !statusText.includes('started')) return;
      started = true;
      // Stopped while its confinement was being set up, where the SIGTERM may have gone
      // unheard (unshare's parent ignores it, pid 1 drops it): the command gets its own.
      if (killTimer !== undefined && !exited) signalCommand();
    });
    child.on('error', (error) => {
      if (child.pid !== undefined || exited) return;
      exited = true;
      startError = `could not start the sandbox: ${errorMessage(error)}`;
      void settle();
    });
    child.on('exit', (code, signal) => {
      exited = true;
      exit = { code, signal };
      deadline.settle();
      clearTimeout(killTimer);
      void settle();
    });
    child.on('close', () => {
      closed = true;
      if (exited && drainTimer !== undefined) finish();
    });
  });
}
