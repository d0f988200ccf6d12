import { COLONY_IDENTITY } from '../../workspace/git/git.js';
import { identityLine, parseCommit, serializeCommit } from '../../workspace/git/git-objects.js';
import type { RepositoryObjects } from '../../workspace/git/repository-objects.js';
import { pause } from './bench-run.js';
import type { BenchRun } from './bench-run.js';
import { mergeChange } from './integrate-change.js';
import type { PlannedChange } from './planned-change.js';
import { recordFailure } from './run-tally.js';
import { errorMessage } from '../../errors/error-message.js';

/** A merger's change: one commit on its own branch, on top of a commit of main. */
export interface IntegrationRequest {
  readonly change: PlannedChange;
  readonly commit: string;
}

/** How a request ended: on main at `main` (or later), or not (the run ended first, or git failed; the tally says which). */
export type IntegrationResult = { readonly landed: true; readonly main: string } | { readonly landed: false };

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

/** The integrator's position: main as last published, the tip it builds on, and the changes the tip holds beyond main. */
interface IntegratorState {
  published: string;
  tip: string;
  tipTree: string;
  readonly integrated: Queued[];
  readonly requeue: (retry: Queued[]) => void;
}

/**
 * Starts the integrator on main as it is now (`main`, whose tree is `mainTree`). It takes
 * everything queued as a batch, in order, and integrates each change onto the tip it builds
 * (a cherry-pick in the object store: no checkout, and no git process for a clean change).
 * It moves main once per batch with a compare-and-swap, and also before it resolves a
 * conflict, so the clean changes it already integrated do not wait behind that resolution.
 * Each conflict costs resolve-ms (its model's time), then both sides are kept, one conflict
 * after another.
 */
export function startIntegrator(run: BenchRun, objects: RepositoryObjects, main: string, mainTree: string): Integrator {
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
  const state: IntegratorState = { published: main, tip: main, tipTree: mainTree, integrated: [], requeue: (retry) => queue.unshift(...retry) };
  const finished = integrate(run, objects, state, nextBatch).finally(() => {
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

async function integrate(run: BenchRun, objects: RepositoryObjects, state: IntegratorState, nextBatch: () => Promise<Queued[]>): Promise<void> {
  for (let batch = await nextBatch(); batch.length > 0; batch = await nextBatch()) {
    try {
      for (const [index, queued] of batch.entries()) {
        const outcome = run.stop.aborted ? 'stopped' : await integrateOne(run, objects, state, queued.request);
        if (outcome === 'stopped') {
          for (const rest of batch.slice(index)) rest.answer({ landed: false });
          break;
        }
        if (outcome === 'failed') queued.answer({ landed: false });
        else state.integrated.push(queued);
      }
      await publish(run, objects, state);
    } catch (error) {
      // The object store or the ref process broke down: stop integrating, and answer every
      // change in hand (an answer already given stands) so no merger waits forever.
      recordFailure(run.tally, `the integrator stopped: ${errorMessage(error)}`);
      for (const queued of [...batch, ...state.integrated]) queued.answer({ landed: false });
      return;
    }
  }
}

/**
 * Moves main to the tip with a compare-and-swap. When main moved meanwhile (nothing else moves
 * it in this mode, but the integrator does not assume so), the changes integrated since go back
 * to the front of the queue, to be integrated again onto where main is now. False when main
 * did not move to the tip.
 */
async function publish(run: BenchRun, objects: RepositoryObjects, state: IntegratorState): Promise<boolean> {
  if (state.tip === state.published) return true;
  const mainRef = `refs/heads/${run.repo.mainBranch}`;
  const swapped = await objects.refs.swap([{ ref: mainRef, next: state.tip, expected: state.published }]);
  const batch = state.integrated.splice(0);
  if (swapped.ok) {
    state.published = state.tip;
    const at = run.elapsed();
    for (const queued of batch) {
      run.tally.landings.push({ at, change: queued.request.change });
      queued.answer({ landed: true, main: state.published });
    }
    return true;
  }
  if (swapped.moved) {
    run.tally.retries += 1;
    state.requeue(batch);
  } else {
    recordFailure(run.tally, `moving ${run.repo.mainBranch}: ${swapped.error}`);
    for (const queued of batch) queued.answer({ landed: false });
  }
  const main = await objects.refs.readBranch(run.repo.mainBranch);
  if (main === null) throw new Error(`${run.repo.mainBranch} disappeared from the scratch repository`);
  state.published = main;
  state.tip = main;
  state.tipTree = await treeOf(objects, main);
  return false;
}

/** The tree of a commit of the scratch repository. */
export async function treeOf(objects: RepositoryObjects, commit: string): Promise<string> {
  const object = await objects.store.read(commit);
  if (object === null || object.type !== 'commit') throw new Error(`${commit} is not a commit in the scratch repository`);
  return parseCommit(object.content).tree;
}

/**
 * Integrates one change onto the tip and moves the tip to the result. 'failed' when git
 * failed (recorded), 'stopped' when the run ended while the integrator was resolving its
 * conflict.
 */
async function integrateOne(run: BenchRun, objects: RepositoryObjects, state: IntegratorState, request: IntegrationRequest): Promise<'integrated' | 'failed' | 'stopped'> {
  const label = `integrating m${request.change.merger} c${request.change.number}`;
  for (;;) {
    const merged = await mergeChange(run, objects, state.tip, state.tipTree, request.commit);
    if (merged.kind === 'failed') {
      recordFailure(run.tally, `${label}: ${merged.error}`);
      return 'failed';
    }
    let tree: string;
    if (merged.kind === 'clean') {
      tree = merged.tree;
    } else {
      // Publish what is integrated before the long part; if main moved meanwhile, merge again onto where it is now.
      if (!(await publish(run, objects, state))) continue;
      run.tally.resolvedByAgent += 1;
      if (!(await pause(run.resolveMs, run.stop))) return 'stopped';
      const resolved = await merged.resolve();
      if (!resolved.ok) {
        recordFailure(run.tally, `${label}: ${resolved.error}`);
        return 'failed';
      }
      tree = resolved.tree;
    }
    const committer = identityLine(COLONY_IDENTITY.name, COLONY_IDENTITY.email, new Date());
    const commit = { tree, parents: [state.tip], author: merged.commit.author, committer, message: merged.commit.message };
    state.tip = await objects.store.write('commit', serializeCommit(commit));
    state.tipTree = tree;
    return 'integrated';
  }
}
