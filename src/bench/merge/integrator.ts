import { join } from 'node:path';
import { describeFailure, runGit } from '../../workspace/git.js';
import { resolveBranch } from '../../workspace/workspace.js';
import { pause } from './bench-run.js';
import type { BenchRun } from './bench-run.js';
import { keepBothSides } from './keep-both-sides.js';
import type { PlannedChange } from './planned-change.js';
import { recordFailure } from './run-tally.js';

/** A merger's change, committed on its own branch on top of a commit of main. */
export interface IntegrationRequest {
  readonly change: PlannedChange;
  readonly commit: string;
  readonly message: string;
}

/** How a request ended: on main, or not (the run ended first, or git failed; the tally says which). */
export type IntegrationResult = { readonly landed: true } | { readonly landed: false };

/** The one serial integrator every merger hands its branch to. */
export interface Integrator {
  /** Queues a change; resolves once it is on main, or will not be. */
  submit(request: IntegrationRequest): Promise<IntegrationResult>;
  /** Resolves when the integrator has stopped (after the run's window closed) and answered every request. */
  readonly finished: Promise<void>;
}

interface Queued {
  readonly request: IntegrationRequest;
  readonly answer: (result: IntegrationResult) => void;
}

type MergedTree = { readonly ok: true; readonly tree: string; readonly conflicted: string[] } | { readonly ok: false; readonly error: string };

/**
 * Starts the integrator. It takes every queued branch in order and integrates each onto the
 * tip it is building, in the object store (`git merge-tree`, then `git commit-tree` with the
 * tip as the only parent: a cherry-pick without a checkout). It moves main once per batch
 * with a compare-and-swap, and also before it resolves a conflict, so the clean changes
 * already integrated do not wait behind that resolution. Each conflict costs resolve-ms (its
 * model's time), then both sides are kept, one conflict after another.
 */
export function startIntegrator(run: BenchRun): Integrator {
  const queue: Queued[] = [];
  let wake: (() => void) | null = null;
  const notify = (): void => {
    wake?.();
    wake = null;
  };
  run.stop.addEventListener('abort', notify, { once: true });
  const nextBatch = async (): Promise<Queued[]> => {
    while (queue.length === 0 && !run.stop.aborted) {
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    return run.stop.aborted ? [] : queue.splice(0);
  };
  const finished = integrate(run, nextBatch, (retry) => queue.unshift(...retry)).finally(() => {
    run.stop.removeEventListener('abort', notify);
    for (const queued of queue.splice(0)) queued.answer({ landed: false });
  });
  const submit = (request: IntegrationRequest): Promise<IntegrationResult> => {
    if (run.stop.aborted) return Promise.resolve({ landed: false });
    return new Promise((answer) => {
      queue.push({ request, answer });
      notify();
    });
  };
  return { submit, finished };
}

/** The integrator's position: main as last published, the tip it builds on, and what the tip holds beyond main. */
interface IntegratorState {
  published: string;
  tip: string;
  readonly integrated: Queued[];
  readonly requeue: (retry: Queued[]) => void;
}

async function integrate(run: BenchRun, nextBatch: () => Promise<Queued[]>, requeue: (retry: Queued[]) => void): Promise<void> {
  const main = await resolveBranch(run.repo, run.repo.trunk);
  const state: IntegratorState = { published: main, tip: main, integrated: [], requeue };
  for (let batch = await nextBatch(); batch.length > 0; batch = await nextBatch()) {
    for (const [index, queued] of batch.entries()) {
      const outcome = run.stop.aborted ? 'stopped' : await integrateOne(run, state, queued.request);
      if (outcome === 'stopped') {
        for (const rest of batch.slice(index)) rest.answer({ landed: false });
        break;
      }
      if (outcome === 'failed') queued.answer({ landed: false });
      else state.integrated.push(queued);
    }
    await publish(run, state);
  }
}

/**
 * Moves main to the tip with a compare-and-swap; false when main moved meanwhile (nothing
 * else moves it in this mode, but the integrator does not assume so): then the changes
 * integrated since go back to the front of the queue, to be integrated again onto where main is now.
 */
async function publish(run: BenchRun, state: IntegratorState): Promise<boolean> {
  if (state.tip === state.published) return true;
  const args = ['update-ref', '-m', 'integrator', `refs/heads/${run.repo.trunk}`, state.tip, state.published];
  const moved = await runGit(run.repo.root, args);
  const batch = state.integrated.splice(0);
  if (moved.code === 0) {
    state.published = state.tip;
    const at = run.elapsed();
    for (const queued of batch) {
      run.tally.landings.push({ at, change: queued.request.change });
      queued.answer({ landed: true });
    }
    return true;
  }
  run.tally.retries += 1;
  state.published = await resolveBranch(run.repo, run.repo.trunk);
  state.tip = state.published;
  state.requeue(batch);
  return false;
}

/**
 * Integrates one branch onto the tip and moves the tip to the result. 'failed' when git
 * failed (recorded), 'stopped' when the run ended while the integrator was resolving its
 * conflict.
 */
async function integrateOne(run: BenchRun, state: IntegratorState, request: IntegrationRequest): Promise<'integrated' | 'failed' | 'stopped'> {
  const label = `integrating m${request.change.merger} c${request.change.number}`;
  for (;;) {
    const merged = await mergeTree(run, state.tip, request.commit);
    if (!merged.ok) {
      recordFailure(run.tally, `${label}: ${merged.error}`);
      return 'failed';
    }
    let tree = merged.tree;
    if (merged.conflicted.length > 0) {
      // Publish what is integrated before the long part, so clean changes do not wait behind
      // it; if main moved meanwhile, merge again onto where it is now.
      if (!(await publish(run, state))) continue;
      run.tally.resolvedByAgent += 1;
      if (!(await pause(run.resolveMs, run.stop))) return 'stopped';
      const resolved = await resolveConflictedTree(run, tree, merged.conflicted);
      if (!resolved.ok) {
        recordFailure(run.tally, `${label}: ${resolved.error}`);
        return 'failed';
      }
      tree = resolved.tree;
    }
    const args = ['commit-tree', tree, '-p', state.tip, '-m', request.message];
    const committed = await runGit(run.repo.root, args);
    if (committed.code !== 0) {
      recordFailure(run.tally, `${label}: ${describeFailure(args, committed)}`);
      return 'failed';
    }
    state.tip = committed.stdout.trim();
    return 'integrated';
  }
}

/**
 * The tree of `tip` plus the branch's change. The merge base git finds is the branch's
 * parent (a commit of main, which `tip` descends from), so this is a cherry-pick. Files in
 * `conflicted` hold git's markers.
 */
async function mergeTree(run: BenchRun, tip: string, commit: string): Promise<MergedTree> {
  const args = ['merge-tree', '--write-tree', '--name-only', '--no-messages', tip, commit];
  const result = await runGit(run.repo.root, args);
  const [tree = '', ...files] = result.stdout.split('\n').filter((line) => line !== '');
  if ((result.code === 0 || result.code === 1) && /^[0-9a-f]{40,64}$/.test(tree)) {
    return { ok: true, tree, conflicted: result.code === 0 ? [] : files };
  }
  return { ok: false, error: describeFailure(args, result) };
}

/** Writes the tree with every conflicted file resolved by keeping both sides, through an index of the integrator's own. */
async function resolveConflictedTree(run: BenchRun, tree: string, files: readonly string[]): Promise<MergedTree> {
  const env = { GIT_INDEX_FILE: join(run.scratchDir, 'integrator.index') };
  const failures: string[] = [];
  const step = async (args: readonly string[], input?: string): Promise<string | null> => {
    const result = await runGit(run.repo.root, args, input === undefined ? { env } : { env, input });
    if (result.code === 0) return result.stdout;
    failures.push(describeFailure(args, result));
    return null;
  };
  if ((await step(['read-tree', tree])) === null) return { ok: false, error: failures.join('; ') };
  for (const file of files) {
    const text = await step(['cat-file', 'blob', `${tree}:${file}`]);
    const blob = text === null ? null : await step(['hash-object', '-w', '--stdin'], keepBothSides(text));
    const staged = blob === null ? null : await step(['update-index', '--cacheinfo', `100644,${blob.trim()},${file}`]);
    if (staged === null) return { ok: false, error: failures.join('; ') };
  }
  const written = await step(['write-tree']);
  if (written === null) return { ok: false, error: failures.join('; ') };
  return { ok: true, tree: written.trim(), conflicted: [] };
}
