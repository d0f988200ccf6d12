import { join } from 'node:path';
import { describeFailure, runGit } from '../../workspace/git/git.js';
import { parseCommit } from '../../workspace/git/git-objects.js';
import type { CommitObject } from '../../workspace/git/git-objects.js';
import type { RepositoryObjects } from '../../workspace/git/repository-objects.js';
import { mergeTrees } from '../../workspace/merge/tree-merge.js';
import type { BenchRun } from './bench-run.js';
import { keepBothSides } from './keep-both-sides.js';

/**
 * One change merged onto the integrator's tip, as git would see it:
 * - clean: `tree` is the result;
 * - conflict: git would stop with markers; the integrator's model resolves it (after
 *   resolve-ms), and `resolve` writes the tree with both sides kept;
 * - failed: git or the object store could not do it.
 */
export type ChangeMerge =
  | { readonly kind: 'clean'; readonly commit: CommitObject; readonly tree: string }
  | { readonly kind: 'conflict'; readonly commit: CommitObject; readonly resolve: () => Promise<TreeResult> }
  | { readonly kind: 'failed'; readonly error: string };

export type TreeResult = { readonly ok: true; readonly tree: string } | { readonly ok: false; readonly error: string };

async function readCommit(objects: RepositoryObjects, oid: string): Promise<CommitObject | null> {
  const object = await objects.store.read(oid);
  return object === null || object.type !== 'commit' ? null : parseCommit(object.content);
}

/**
 * Merges the change `commit` brings (from its parent, a commit of main) into `tip`, whose tree
 * is `tipTree`. In-process first, with the same tree merge colony's own landings use, so the
 * integrator pays no git process for a clean change. That merge settles appends to the same
 * file by itself, but git would stop on them: for the integrator they are conflicts its model
 * resolves, and the settled tree (main's lines, then the change's) is exactly what keeping
 * both sides gives. Whatever the tree merge does not settle, git's `merge-tree` decides.
 */
export async function mergeChange(run: BenchRun, objects: RepositoryObjects, tip: string, tipTree: string, commit: string): Promise<ChangeMerge> {
  const change = await readCommit(objects, commit);
  const parent = change?.parents[0];
  const base = parent === undefined ? null : await readCommit(objects, parent);
  if (change === null || base === null) return { kind: 'failed', error: `${commit} is not a commit on top of a commit this repository has` };
  const merged = await mergeTrees(objects.store, base.tree, tipTree, change.tree);
  if (merged.ok && merged.autoResolved.length === 0) return { kind: 'clean', commit: change, tree: merged.tree };
  if (merged.ok) return { kind: 'conflict', commit: change, resolve: async () => ({ ok: true, tree: merged.tree }) };
  const args = ['merge-tree', '--write-tree', '--name-only', '--no-messages', tip, commit];
  const result = await runGit(run.repo.root, args);
  const [tree = '', ...files] = result.stdout.split('\n').filter((line) => line !== '');
  if (!((result.code === 0 || result.code === 1) && /^[0-9a-f]{40,64}$/.test(tree))) return { kind: 'failed', error: describeFailure(args, result) };
  if (result.code === 0) return { kind: 'clean', commit: change, tree };
  return { kind: 'conflict', commit: change, resolve: () => keepBothSidesInTree(run, tree, files) };
}

/** Writes `tree` with each of `files` (holding git's markers) resolved by keeping both sides, through an index file of the integrator's own. */
async function keepBothSidesInTree(run: BenchRun, tree: string, files: readonly string[]): Promise<TreeResult> {
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
  return { ok: true, tree: written.trim() };
}
