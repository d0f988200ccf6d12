import { chmod, copyFile, link, mkdir, readlink, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readLayerEntries, recordLayerUse, type LayerEntry } from './dependency-layer-records.js';
import { FILE_OPERATION_CONCURRENCY, forEachLimited, listFileTree } from '../files/file-tree.js';
import { describeFailure, runGit } from '../git/git.js';
import { pathExists } from '../files/path-exists.js';
import { errorMessage } from '../../errors/error-message.js';

/** What linking did: the top-level entries it made in the workspace and how many files they hold. */
export type LinkDependencyLayerResult =
  | { readonly ok: true; readonly entries: readonly string[]; readonly files: number }
  | { readonly ok: false; readonly error: string };

/**
 * Files copied into each workspace rather than linked, because npm rewrites them in place:
 * `npm install` in a workspace rewrites node_modules' hidden lockfile with `writeFile`, which
 * through a hard link would change the file every other workspace shares.
 */
const COPIED_NOT_LINKED: ReadonlySet<string> = new Set(['node_modules/.package-lock.json']);

/**
 * Makes the layer's entries (its `node_modules/`, a monorepo package's
 * `packages/a/node_modules/`) appear at the same places in the workspace: directories are made
 * anew, files are hard links to the layer's, symbolic links are recreated (relative ones, like
 * a workspace package's link, so point into the workspace). It costs one directory entry per
 * file, not a copy, and `require` in the workspace finds the packages.
 *
 * Refuses, changing nothing, when an entry of the layer is not ignored by the workspace's git
 * configuration (`git check-ignore`) or has tracked files: `git add --all` when the work lands
 * would commit it. Refuses too when the workspace already has the entry. A link that fails
 * half-way (a full disk, the layer on another file system) removes what it made. Never
 * throws; a refusal says why and the workspace goes on without the layer.
 */
export async function linkDependencyLayer(workspacePath: string, layerDir: string): Promise<LinkDependencyLayerResult> {
  const listed = await entriesOf(layerDir);
  if (!listed.ok) return listed;
  const { entries } = listed;
  for (const entry of entries) {
    const refusal = await whyNotLink(workspacePath, entry);
    if (refusal !== null) return { ok: false, error: refusal };
  }
  let files = 0;
  const made: string[] = [];
  try {
    for (const { path, directory } of entries) {
      made.push(path);
      await mkdir(dirname(join(workspacePath, path)), { recursive: true });
      files += await linkEntry(join(layerDir, path), join(workspacePath, path), path, directory);
    }
    await recordLayerUse(layerDir, workspacePath);
  } catch (error) {
    for (const path of made) await rm(join(workspacePath, path), { recursive: true, force: true }).catch(() => undefined);
    const crossDevice = error instanceof Error && 'code' in error && error.code === 'EXDEV';
    const why = crossDevice ? 'the layer is on another file system than the workspace, and hard links cannot cross file systems' : errorMessage(error);
    return { ok: false, error: `cannot link the dependency layer ${layerDir} into ${workspacePath}: ${why}` };
  }
  return { ok: true, entries: entries.map((entry) => entry.path), files };
}

/**
 * Removes from a checkout what `linkDependencyLayer` put there from the layer at `layerDir`
 * (its entries are colony's links, never the project's files).
 */
export async function unlinkDependencyLayer(workspacePath: string, layerDir: string): Promise<void> {
  const listed = await entriesOf(layerDir);
  if (!listed.ok) return;
  for (const { path } of listed.entries) await rm(join(workspacePath, path), { recursive: true, force: true });
}

/**
 * Whether git in `dir` ignores every entry of the layer (`node_modules/`, a `.venv/`), so that
 * an overlay may show them in a workspace without a merge committing them.
 */
export async function gitIgnoresLayer(dir: string, layerDir: string): Promise<boolean> {
  const listed = await entriesOf(layerDir);
  if (!listed.ok) return false;
  for (const entry of listed.entries) {
    if ((await checkIgnore(dir, entry)).result.code !== 0) return false;
  }
  return true;
}

/** The layer's entries, or why there are none to share. */
async function entriesOf(layerDir: string): Promise<{ readonly ok: true; readonly entries: LayerEntry[] } | { readonly ok: false; readonly error: string }> {
  let entries: LayerEntry[];
  try {
    entries = await readLayerEntries(layerDir);
  } catch (error) {
    return { ok: false, error: `the dependency layer ${layerDir} cannot be read: ${errorMessage(error)}` };
  }
  if (entries.length === 0) return { ok: false, error: `the dependency layer ${layerDir} is empty` };
  return { ok: true, entries };
}

/** `git check-ignore` on one entry; a trailing slash asks about a directory, so a pattern like `node_modules/` matches too. */
async function checkIgnore(dir: string, { path: name, directory }: LayerEntry) {
  const path = directory ? `${name}/` : name;
  const args = ['check-ignore', '--quiet', '--', path];
  return { path, args, result: await runGit(dir, args) };
}

async function whyNotLink(workspacePath: string, entry: LayerEntry): Promise<string | null> {
  const name = entry.path;
  if (await pathExists(join(workspacePath, name))) {
    return `the workspace already has ${name}, so the shared one was not linked over it`;
  }
  const { path, args: ignoredArgs, result: ignored } = await checkIgnore(workspacePath, entry);
  if (ignored.code === 1) {
    return `${name} is not ignored by the repository's git configuration, so landing the work (git add --all) would commit the shared dependencies; add \`/${path}\` to .gitignore to share one install among workspaces`;
  }
  if (ignored.code !== 0) return `cannot tell whether git ignores ${name}: ${describeFailure(ignoredArgs, ignored)}`;
  const trackedArgs = ['ls-files', '-z', '--', name];
  const tracked = await runGit(workspacePath, trackedArgs);
  if (tracked.code !== 0) return `cannot tell whether git tracks files in ${name}: ${describeFailure(trackedArgs, tracked)}`;
  if (tracked.stdout !== '') return `the repository tracks files in ${name}, so a shared copy would show as changes`;
  return null;
}

/** Links one top-level entry of the layer; returns how many files it holds. */
async function linkEntry(source: string, target: string, name: string, directory: boolean): Promise<number> {
  if (!directory) {
    await placeFile(source, target, name);
    return 1;
  }
  const tree = await listFileTree(source);
  await mkdir(target);
  // Parents come before their children, so one pass makes every directory.
  for (const child of tree.directories) await mkdir(join(target, child));
  await forEachLimited(tree.symlinks, FILE_OPERATION_CONCURRENCY, async (child) => {
    await symlink(await readlink(join(source, child)), join(target, child));
  });
  await forEachLimited(tree.files, FILE_OPERATION_CONCURRENCY, (child) => placeFile(join(source, child), join(target, child), `${name}/${child}`));
  return tree.files.length;
}

async function placeFile(source: string, target: string, layerPath: string): Promise<void> {
  if (!COPIED_NOT_LINKED.has(layerPath)) return link(source, target);
  await copyFile(source, target);
  // The copy takes the layer's read-only mode; it is the workspace's own, so npm may rewrite it.
  await chmod(target, 0o644);
}

