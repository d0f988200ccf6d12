import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { describeFailure, runGit, splitNul } from '../git/git.js';
import type { Repository } from '../git/repository.js';

/** A file an install needs, as git stores it in the commit. */
export interface InstallInputFile {
  readonly path: string;
  readonly mode: string;
  readonly oid: string;
}

/**
 * How a layer is made: the command, run in a folder holding only the install's input files, and
 * what of that folder becomes the layer.
 */
export interface SetupPlan {
  /** The shell command line: npm's install, or the project's own `setup`. */
  readonly command: string;
  /**
   * The install in a few words, for people watching it: the command itself for npm and a
   * project's setup, `pnpm@10 install --frozen-lockfile …` for a manager colony fetches first.
   */
  readonly label: string;
  /**
   * What the layer keeps: npm's `node_modules/`, or (`made`) every top-level entry the command
   * made beside its inputs (a `.venv/`, a `vendor/`).
   */
  readonly keeps: 'node_modules' | 'made';
  /**
   * The package manager that installs from the registries (`npm`, `pnpm`, `yarn`), whose
   * install reaches those alone; null for a project's own setup.
   */
  readonly manager: 'npm' | 'pnpm' | 'yarn' | null;
  /** The registry the project's own configuration names (`registry=` in `.npmrc`), or null for the package manager's default. */
  readonly registry: string | null;
  /** How many packages the inputs ask for (a lockfile's entries, a manifest's dependencies), or null when colony cannot tell. */
  readonly packages: number | null;
}

/**
 * What an install of a commit's dependencies depends on, and the key naming its result. `files`
 * are what the install directory must hold: package.json, the lockfile when there is one,
 * `.npmrc` when there is one, and the local tarballs the lockfile installs from; or the files a
 * `setup` command names. A repository colony has no install for comes back `{ ok: false }` with
 * `stopsRun` false (the run goes on without a layer); inputs the user named that are wrong, with
 * `stopsRun` true.
 */
export type DependencyInputs =
  | { readonly ok: true; readonly key: string; readonly files: readonly InstallInputFile[]; readonly plan: SetupPlan }
  | { readonly ok: false; readonly error: string; readonly stopsRun: boolean };

/** What reading a JavaScript project's inputs found: its install, or why colony has none for it (a reason that does not stop the run). */
export type ProjectInputs = Extract<DependencyInputs, { ok: true }> | { readonly ok: false; readonly error: string };

/** Bumped when the layout of a layer changes, so no older layer is taken for a newer one. */
const LAYER_FORMAT = 'colony-dependency-layer/1';

export interface TreeEntry {
  readonly mode: string;
  readonly type: string;
  readonly oid: string;
}

/** A layer's key: a sha256 over the layout's version, node's major version, the platform and `parts`. */
export function layerKey(parts: readonly (readonly [string, string])[]): string {
  const hash = createHash('sha256');
  const part = (name: string, value: string) => hash.update(`${name}\0${value.length}\0${value}\0`);
  part('format', LAYER_FORMAT);
  part('node', process.versions.node.split('.')[0] ?? '');
  part('platform', `${process.platform}-${process.arch}`);
  for (const [name, value] of parts) part(name, value);
  return hash.digest('hex');
}

/**
 * Writes `files` from the object store into `dir` (which must exist) through a throw-away index,
 * so binary tarballs come out byte for byte and no checkout is touched. Returns null on success,
 * or git's complaint.
 */
export async function writeInputFiles(repo: Repository, files: readonly InstallInputFile[], dir: string): Promise<string | null> {
  const indexFile = join(dir, '.colony-install-inputs.index');
  const env = { GIT_INDEX_FILE: indexFile };
  try {
    const input = files.map((file) => `${file.mode} ${file.oid}\t${file.path}\0`).join('');
    const addArgs = ['update-index', '--add', '-z', '--index-info'];
    const added = await runGit(repo.root, addArgs, { env, input });
    if (added.code !== 0) return describeFailure(addArgs, added);
    const checkoutArgs = ['checkout-index', '--all', '--force', `--prefix=${dir}/`];
    const checkedOut = await runGit(repo.root, checkoutArgs, { env });
    if (checkedOut.code !== 0) return describeFailure(checkoutArgs, checkedOut);
    return null;
  } finally {
    await rm(indexFile, { force: true });
  }
}

export async function listTree(
  repo: Repository,
  commit: string,
  paths: readonly string[],
): Promise<{ readonly ok: true; readonly entries: Map<string, TreeEntry> } | { readonly ok: false; readonly error: string }> {
  const entries = new Map<string, TreeEntry>();
  if (paths.length === 0) return { ok: true, entries };
  const args = ['ls-tree', '-z', '--full-tree', commit, '--', ...paths];
  const result = await runGit(repo.root, args);
  if (result.code !== 0) return { ok: false, error: `cannot read the tree of ${commit}: ${describeFailure(args, result)}` };
  for (const line of splitNul(result.stdout)) {
    const match = /^(\d+) (\w+) ([0-9a-f]+)\t(.*)$/s.exec(line);
    if (match !== null) entries.set(match[4] as string, { mode: match[1] as string, type: match[2] as string, oid: match[3] as string });
  }
  return { ok: true, entries };
}

/**
 * Every file at or under `paths` (files, or folders standing for every file in them; `.` for
 * the whole tree) in the tree of `commit`, with git's mode and blob id; what is not there is
 * simply not listed, and no paths list nothing.
 */
export async function listFiles(repo: Repository, commit: string, paths: readonly string[]): Promise<{ readonly ok: true; readonly files: InstallInputFile[] } | { readonly ok: false; readonly error: string }> {
  if (paths.length === 0) return { ok: true, files: [] };
  const args = ['ls-tree', '-r', '-z', '--full-tree', commit, '--', ...paths];
  const listed = await runGit(repo.root, args);
  if (listed.code !== 0) return { ok: false, error: `cannot read the tree of ${commit}: ${describeFailure(args, listed)}` };
  const files = splitNul(listed.stdout).flatMap((line) => {
    const match = /^(\d+) blob ([0-9a-f]+)\t(.*)$/s.exec(line);
    return match === null ? [] : [{ mode: match[1] as string, oid: match[2] as string, path: match[3] as string }];
  });
  return { ok: true, files };
}

export function blobEntry(entries: ReadonlyMap<string, TreeEntry>, path: string): TreeEntry | null {
  const entry = entries.get(path);
  return entry !== undefined && entry.type === 'blob' && entry.mode !== '120000' ? entry : null;
}

export async function readBlob(repo: Repository, oid: string): Promise<string | null> {
  const result = await runGit(repo.root, ['cat-file', 'blob', oid]);
  return result.code === 0 ? result.stdout : null;
}

export function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Why a path a lockfile or a setup names is not one inside the repository, or null when it is. */
export function repositoryPathProblem(path: string): string | null {
  const normal = posix.normalize(path);
  return normal.startsWith('/') || normal === '..' || normal.startsWith('../') ? 'outside the repository' : null;
}
