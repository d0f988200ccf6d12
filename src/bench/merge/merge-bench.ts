import { performance } from 'node:perf_hooks';
import { closeRepositoryObjects } from '../../workspace/git/repository-objects.js';
import type { BenchRun } from './bench-run.js';
import { runIntegratorMode } from './integrator-mode.js';
import { checkLanded } from './landed-check.js';
import type { LandedCheck } from './landed-check.js';
import { createTally, figuresOf } from './run-tally.js';
import type { MergeBenchFigures, MergeBenchMode } from './run-tally.js';
import { createScratchRepository } from './scratch-repository.js';
import type { ScratchRepository } from './scratch-repository.js';
import { runSelfMergeMode } from './self-merge-mode.js';
import { errorMessage } from '../../errors/error-message.js';

export type { MergeBenchFigures, MergeBenchMode } from './run-tally.js';
export type { LandedCheck } from './landed-check.js';

export interface MergeBenchOptions {
  readonly mode: MergeBenchMode;
  /** K: mergers working at once, each in its own workspace. At least 1. */
  readonly mergers: number;
  /** F: the chance that a change appends a line to the shared file instead of adding a file of its own. */
  readonly shared: number;
  /** Of the shared-file changes, the chance that one inserts its line near the top: a conflict colony hands to the agent. */
  readonly insertShare: number;
  /** How long the mergers keep making changes. */
  readonly seconds: number;
  /** How long an agent (a merger's, or the integrator's) takes to resolve a conflict that reaches it. */
  readonly resolveMs: number;
  readonly seed: number;
  /** Files in the scratch repository's first commit, besides the shared file. */
  readonly files: number;
  /** Stops the run early, as its window closing would. */
  readonly signal?: AbortSignal;
  /** Receives a line when the set-up is done and when the window closes. */
  readonly onProgress?: (line: string) => void;
}

export type MergeBenchResult =
  | { readonly ok: true; readonly figures: MergeBenchFigures; readonly check: LandedCheck }
  | { readonly ok: false; readonly error: string };

/** The problem with `options`, or null. The CLI checks the same before calling. */
export function mergeBenchOptionsProblem(options: MergeBenchOptions): string | null {
  if (!Number.isInteger(options.mergers) || options.mergers < 1) return `mergers must be a whole number of at least 1, got ${options.mergers}`;
  if (!(options.shared >= 0 && options.shared <= 1)) return `shared must be between 0 and 1, got ${options.shared}`;
  if (!(options.insertShare >= 0 && options.insertShare <= 1)) return `insertShare must be between 0 and 1, got ${options.insertShare}`;
  if (!(options.seconds > 0 && Number.isFinite(options.seconds))) return `seconds must be more than 0, got ${options.seconds}`;
  if (!Number.isInteger(options.resolveMs) || options.resolveMs < 0) return `resolveMs must be a whole number of at least 0, got ${options.resolveMs}`;
  if (!Number.isInteger(options.seed)) return `seed must be a whole number, got ${options.seed}`;
  if (!Number.isInteger(options.files) || options.files < 0) return `files must be a whole number of at least 0, got ${options.files}`;
  return null;
}

/**
 * Runs K mergers against a scratch repository for `seconds`, in one of two designs: each
 * lands its own changes with mergeToMain (self-merge), or hands them to one serial
 * integrator. Then checks main against what was reported landed, and deletes the repository.
 * Setting up can fail (git missing, no space left): that comes back as `{ ok: false }`.
 */
export async function runMergeBench(options: MergeBenchOptions): Promise<MergeBenchResult> {
  const problem = mergeBenchOptionsProblem(options);
  if (problem !== null) throw new Error(`runMergeBench: ${problem}`);
  const progress = options.onProgress ?? (() => undefined);
  const settingUp = performance.now();
  let scratch: ScratchRepository;
  try {
    scratch = await createScratchRepository({ files: options.files, mergers: options.mergers });
  } catch (error) {
    return { ok: false, error: `Could not set up the scratch repository: ${errorMessage(error)}` };
  }
  try {
    progress(
      `scratch repository with ${options.files + 1} files and ${options.mergers} workspaces ready in ${((performance.now() - settingUp) / 1000).toFixed(1)} s; ${options.mode} for ${options.seconds} s`,
    );
    const run = startRun(options, scratch);
    await (options.mode === 'self-merge' ? runSelfMergeMode(run.context) : runIntegratorMode(run.context));
    const windowMs = run.close();
    progress(`window closed; merges in flight finished ${((run.context.elapsed() - windowMs) / 1000).toFixed(1)} s later; checking main`);
    const check = await checkLanded(scratch.repo, run.context.tally.landings);
    return { ok: true, figures: figuresOf(run.context.tally, options, windowMs), check };
  } finally {
    // Both modes read and move refs through long-lived git processes: end them before their directory goes.
    await closeRepositoryObjects(scratch.repo);
    await scratch.remove();
  }
}

/** Opens the run's window: it closes after `seconds`, or when the caller's signal fires. `close` says how long it was. */
function startRun(options: MergeBenchOptions, scratch: ScratchRepository): { readonly context: BenchRun; close(): number } {
  const stop = new AbortController();
  const started = performance.now();
  const elapsed = (): number => performance.now() - started;
  let closedAt: number | null = null;
  const closeWindow = (): void => {
    closedAt ??= elapsed();
    stop.abort();
  };
  const timer = setTimeout(closeWindow, options.seconds * 1000);
  options.signal?.addEventListener('abort', closeWindow, { once: true });
  if (options.signal?.aborted === true) closeWindow();
  const context: BenchRun = {
    repo: scratch.repo,
    scratchDir: scratch.base,
    workspaces: scratch.workspaces,
    mix: { shared: options.shared, insertShare: options.insertShare },
    resolveMs: options.resolveMs,
    seed: options.seed,
    stop: stop.signal,
    tally: createTally(options.mergers),
    elapsed,
  };
  return {
    context,
    close: () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', closeWindow);
      return closedAt ?? elapsed();
    },
  };
}
