import { readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import type { ColonyEvent, EventBody } from '../events/event-types.js';
import type { Handoff } from '../events/handoff.js';
import { newShortId } from '../events/ids.js';
import type { ChatModel } from '../model/chat-model.js';
import { parseScenario } from '../model/sim/scenario.js';
import type { EventStore } from '../store/event-store.js';
import { openSqliteEventStore } from '../store/sqlite-event-store.js';
import { runGit } from '../workspace/git.js';
import { excludeFromGit, findDirtyFiles, openRepository, type Repository } from '../workspace/repository.js';
import { repairCheckout, startCheckoutSync } from './checkout-sync.js';
import { runWorkerTask } from './run-worker-task.js';
import { acquireRunLock, type RunLock } from './run-lock.js';
import { defaultStateDir, eventsDatabasePath, prepareStateDir } from './state-directory.js';

export { defaultStateDir, eventsDatabasePath } from './state-directory.js';

export interface WorkSessionOptions {
  readonly repoDir: string;
  readonly taskPath: string;
  readonly model: ChatModel;
  /** Defaults to `<repo>/.colony`. */
  readonly stateDir?: string;
  readonly maxSteps: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: ColonyEvent) => void;
}

export type WorkSessionResult =
  | { readonly ok: false; readonly error: string }
  | {
      readonly ok: true;
      readonly runId: string;
      readonly handoff: Handoff;
      readonly trunk: string;
      readonly trunkCommit: string;
      readonly stateDir: string;
      /** Why the user's checkout could not be brought up to date, or null when it was. */
      readonly checkoutProblem: string | null;
      readonly keptWorkspace: string | null;
    };

/**
 * `colony work`: one worker on one task in a repository, from the checks up front to the
 * user's checkout brought up to date. Problems with the input come back as `{ ok: false }`
 * before anything is changed.
 */
export async function runWorkSession(options: WorkSessionOptions): Promise<WorkSessionResult> {
  const task = readTask(options.taskPath);
  if (!task.ok) return task;
  const opened = await openRepository(options.repoDir);
  if (!opened.ok) return opened;
  const { repo } = opened;
  const stateDir = resolve(options.stateDir ?? defaultStateDir(repo.root));
  const prepared = prepareStateDir(stateDir);
  if (!prepared.ok) return prepared;
  // colony's state never shows in the user's `git status`, even when this run is refused.
  const inside = relative(repo.root, stateDir);
  if (!inside.startsWith('..') && inside !== '') await excludeFromGit(repo, `/${inside}/`);
  // One run per repository (they would fight over the checkout) and per state directory
  // (they would interleave the event log).
  const repositoryLock = acquireRunLock(join(repo.gitDir, 'colony-run.lock'), `the repository ${repo.root}`);
  if (!repositoryLock.ok) return repositoryLock;
  const stateLock = acquireRunLock(join(stateDir, 'run.lock'), `the state directory ${stateDir}`);
  if (!stateLock.ok) {
    repositoryLock.lock.release();
    return stateLock;
  }
  const locks: RunLock[] = [stateLock.lock, repositoryLock.lock];
  try {
    const repaired = await repairCheckout(repo);
    if (!repaired.ok) return repaired;
    const dirty = await findDirtyFiles(repo);
    if (dirty.length > 0) {
      return {
        ok: false,
        error:
          `the repository has uncommitted changes (${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}). ` +
          'colony lands work on the checked-out branch and updates your checkout, so it starts from a clean tree: ' +
          'commit or stash your changes (git stash), then run this again.',
      };
    }
    return await runInRepository(options, repo, stateDir, task);
  } finally {
    for (const lock of locks) lock.release();
  }
}

async function runInRepository(
  options: WorkSessionOptions,
  repo: Repository,
  stateDir: string,
  task: { title: string; body: string },
): Promise<WorkSessionResult> {
  const startCommit = (await runGit(repo.root, ['rev-parse', `refs/heads/${repo.trunk}`])).stdout.trim();
  let store: EventStore;
  try {
    store = openSqliteEventStore(eventsDatabasePath(stateDir));
  } catch (error) {
    return { ok: false, error: `cannot open the event log: ${error instanceof Error ? error.message : String(error)}` };
  }
  const checkout = startCheckoutSync(repo, startCommit);
  const runId = newShortId('run');
  const started = Date.now();
  // A forced quit (process.exit) still writes the events recorded in its last moments.
  const closeOnExit = () => store.close();
  process.once('exit', closeOnExit);
  try {
    const record = (body: EventBody) => {
      const event = store.append({ ...body, runId, agentId: 'system' });
      options.onEvent?.(event);
    };
    record({ type: 'run.started', data: { mode: 'work', repo: repo.root, model: options.model.spec, title: task.title } });
    const result = await runWorkerTask({
      repo,
      store,
      model: options.model,
      task: { id: newShortId('task'), title: task.title, body: task.body },
      runId,
      workspacesDir: join(stateDir, 'workspaces'),
      maxSteps: options.maxSteps,
      onLanded: () => checkout.afterLanding(),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    });
    const checkoutProblem = await checkout.finish();
    record({ type: 'run.ended', data: { status: result.handoff.status, durationMs: Date.now() - started } });
    const trunkCommit = (await runGit(repo.root, ['rev-parse', `refs/heads/${repo.trunk}`])).stdout.trim();
    return {
      ok: true,
      runId,
      handoff: result.handoff,
      trunk: repo.trunk,
      trunkCommit,
      stateDir,
      checkoutProblem,
      keptWorkspace: result.keptWorkspace,
    };
  } finally {
    process.off('exit', closeOnExit);
    store.close();
  }
}

type TaskFile = { ok: true; title: string; body: string } | { ok: false; error: string };

function readTask(path: string): TaskFile {
  let body: string;
  try {
    if (!statSync(path).isFile()) return { ok: false, error: `the task ${path} is not a file: pass a Markdown file` };
    body = readFileSync(path, 'utf8');
  } catch {
    return { ok: false, error: `the task file ${path} does not exist: pass the path of a Markdown file describing the task` };
  }
  if (body.trim() === '') return { ok: false, error: `the task file ${path} is empty: describe the task in it` };
  if (body.includes('```colony-spec')) {
    const scenario = parseScenario(body);
    if (!scenario.ok) return { ok: false, error: `the task file ${path} has a colony-spec block that is not valid: ${scenario.error}` };
  }
  const heading = /^#\s+(.+)$/m.exec(body);
  return { ok: true, title: heading?.[1]?.trim() ?? basename(path), body };
}
