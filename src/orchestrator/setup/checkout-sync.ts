import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { updateCheckout } from '../../workspace/checkout/checkout.js';
import { ownerUmask } from './command-sandbox.js';
import { findDirtyFiles, type Repository } from '../../workspace/git/repository.js';
import { runGit } from '../../workspace/git/git.js';
import { errorMessage } from '../../errors/error-message.js';

/**
 * colony moves main while the user's checkout of it stays where it was, so until the
 * checkout is updated, `git status` there shows colony's work as if the user had undone it.
 * The checkout is therefore updated after every landing, and the commit it matches is kept in
 * the git directory, so that a run that died before updating it is repaired by the next.
 */
interface CheckoutRecord {
  readonly root: string;
  readonly mainBranch: string;
  /** The commit the user's index and working tree match. */
  readonly commit: string;
}

/**
 * The record lives in the repository's git directory, not in a state directory: the checkout
 * belongs to the repository, whichever state directory a run used.
 */
function recordPath(repo: Repository): string {
  return join(repo.gitDir, 'colony-checkout.json');
}

function writeRecord(repo: Repository, record: CheckoutRecord): void {
  const path = recordPath(repo);
  const temporary = `${path}.tmp`;
  const descriptor = openSync(temporary, 'w');
  try {
    writeFileSync(descriptor, JSON.stringify(record));
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  renameSync(temporary, path);
}

type ReadRecord = { readonly kind: 'none' } | { readonly kind: 'record'; readonly record: CheckoutRecord } | { readonly kind: 'unreadable' };

function readRecord(repo: Repository): ReadRecord {
  const path = recordPath(repo);
  if (!existsSync(path)) return { kind: 'none' };
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<CheckoutRecord>;
    if (typeof parsed.root !== 'string' || typeof parsed.mainBranch !== 'string' || typeof parsed.commit !== 'string') {
      return { kind: 'unreadable' };
    }
    return { kind: 'record', record: { root: parsed.root, mainBranch: parsed.mainBranch, commit: parsed.commit } };
  } catch {
    return { kind: 'unreadable' };
  }
}

/**
 * Finishes what an earlier run could not: brings the checkout from the commit it was left at
 * up to main. Succeeds at once when there is nothing to repair.
 */
export async function repairCheckout(
  repo: Repository,
): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: string }> {
  const read = readRecord(repo);
  if (read.kind === 'none') return { ok: true };
  if (read.kind === 'unreadable') {
    // A torn record over a checkout that shows nothing changed left nothing behind: the tree
    // matches its HEAD, whichever commit the record named. Only a changed tree needs a person.
    if ((await findDirtyFiles(repo)).length === 0) {
      rmSync(recordPath(repo), { force: true });
      return { ok: true };
    }
    return {
      ok: false,
      error:
        `${recordPath(repo)} is damaged, so colony cannot tell whether an earlier run left your checkout behind ${repo.mainBranch}. ` +
        `If \`git status\` shows changes you did not make, they undo colony's work: do not commit them; ` +
        `run \`git reset --keep ${repo.mainBranch}\` if you have no edits of your own, then delete that file and run again.`,
    };
  }
  const { record } = read;
  if (record.root !== repo.root || record.mainBranch !== repo.mainBranch) {
    rmSync(recordPath(repo), { force: true });
    return { ok: true };
  }
  const updated = await updateCheckout(repo, record.commit, { umask: ownerUmask() });
  if (updated.ok) {
    rmSync(recordPath(repo), { force: true });
    return { ok: true };
  }
  return {
    ok: false,
    error:
      `an earlier colony run landed work on ${repo.mainBranch} but could not bring your checkout up to date, ` +
      `so your working tree still shows ${repo.mainBranch} as it was at ${record.commit.slice(0, 12)}. ` +
      `Do not commit that state: it would undo the work. ${updated.error}`,
  };
}

export interface CheckoutSync {
  /**
   * Brings the checkout up to main after a landing, after any update still going; never
   * throws, and a refusal is kept for `finish`.
   */
  afterLanding(): Promise<void>;
  /** Brings the checkout up to main one last time: null when it is, else why not. */
  finish(): Promise<string | null>;
  /** The commit colony last brought the checkout to. */
  current(): string;
}

/**
 * Starts keeping the user's checkout, now clean at `commit`, in step with main. Updates run
 * one at a time. Each starts from the commit the checkout's index now matches, which is the
 * last one colony brought it to unless the user committed, reset or amended since (see
 * `checkoutCommit`), so their own commits are carried along, not undone.
 */
export function startCheckoutSync(repo: Repository, commit: string): CheckoutSync {
  let current = commit;
  let problem: string | null = null;
  let queue: Promise<void> = Promise.resolve();
  writeRecord(repo, { root: repo.root, mainBranch: repo.mainBranch, commit });
  const update = async () => {
    try {
      const from = await checkoutCommit(repo, current);
      const updated = await updateCheckout(repo, from, { umask: ownerUmask() });
      if (updated.ok) {
        current = updated.commit;
        problem = null;
        writeRecord(repo, { root: repo.root, mainBranch: repo.mainBranch, commit: current });
      } else {
        problem = updated.error;
      }
    } catch (error) {
      problem = `colony could not bring your checkout up to ${repo.mainBranch}: ${errorMessage(error)}`;
    }
  };
  const next = (): Promise<void> => {
    queue = queue.then(update);
    return queue;
  };
  return {
    afterLanding: next,
    current: () => current,
    async finish() {
      await next();
      if (problem === null) rmSync(recordPath(repo), { force: true });
      return problem;
    },
  };
}

/** How far back the trunk's reflog is searched for the commit the user's index matches. */
const REFLOG_DEPTH = 100;

/**
 * The commit the checkout's index matches: `last` (where colony last brought it) when it
 * still does, else the newest commit the trunk pointed at whose tree is the index's, which is
 * where a commit, reset or amend of the user's left it. `last` when none is (the user has
 * staged changes of their own): the update then carries those as local changes.
 */
async function checkoutCommit(repo: Repository, last: string): Promise<string> {
  // The tree of the index as it is; written as objects, as `git commit` would write them.
  const written = await runGit(repo.root, ['write-tree']);
  if (written.code !== 0) return last;
  const indexTree = written.stdout.trim();
  const lastTree = await runGit(repo.root, ['rev-parse', `${last}^{tree}`]);
  if (lastTree.code === 0 && lastTree.stdout.trim() === indexTree) return last;
  const candidates = await runGit(repo.root, ['log', '--walk-reflogs', `-n${REFLOG_DEPTH}`, '--format=%H %T', `refs/heads/${repo.mainBranch}`, '--']);
  if (candidates.code !== 0) return last;
  for (const line of candidates.stdout.split('\n')) {
    const [candidate, tree] = line.split(' ');
    if (candidate !== undefined && tree === indexTree) return candidate;
  }
  return last;
}
