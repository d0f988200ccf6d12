import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { describeFailure, runGit, splitNul } from '../git/git.js';
import type { Repository } from '../git/repository.js';
import { NPM_CI_COMMAND, NPM_INSTALL_COMMAND } from './npm-install.js';

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
   * What the layer keeps: npm's `node_modules/`, or (`made`) every top-level entry the command
   * made beside its inputs (a `.venv/`, a `vendor/`).
   */
  readonly keeps: 'node_modules' | 'made';
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

/** Bumped when the layout of a layer changes, so no older layer is taken for a newer one. */
const LAYER_FORMAT = 'colony-dependency-layer/1';

const ROOT_FILES = ['package.json', 'npm-shrinkwrap.json', 'package-lock.json', '.npmrc', 'yarn.lock', 'pnpm-lock.yaml'];

export interface TreeEntry {
  readonly mode: string;
  readonly type: string;
  readonly oid: string;
}

/**
 * Reads, from the tree at `commit` (not from any checkout), what an npm install of the
 * repository's root package needs, and computes its key: a sha256 over package.json, the
 * lockfile, `.npmrc`, the local tarballs' blob ids, node's major version, the platform and the
 * architecture. A package without a lockfile is installed from package.json alone, keyed by it
 * and `.npmrc`. A repository colony cannot install this way comes back as `{ ok: false }`
 * saying why.
 */
export async function readDependencyInputs(repo: Repository, commit: string): Promise<DependencyInputs> {
  const read = await readNpmInputs(repo, commit);
  return 'error' in read ? { ok: false, error: read.error, stopsRun: false } : read;
}

type NpmInputs = Extract<DependencyInputs, { ok: true }> | { readonly ok: false; readonly error: string };

async function readNpmInputs(repo: Repository, commit: string): Promise<NpmInputs> {
  const rootEntries = await listTree(repo, commit, ROOT_FILES);
  if (!rootEntries.ok) return rootEntries;
  const entries = rootEntries.entries;
  const packageEntry = blobEntry(entries, 'package.json');
  if (packageEntry === null) return { ok: false, error: 'the repository has no package.json at its root' };
  const lockfilePath = ['npm-shrinkwrap.json', 'package-lock.json'].find((path) => blobEntry(entries, path) !== null);
  if (lockfilePath === undefined) {
    if (entries.has('yarn.lock') || entries.has('pnpm-lock.yaml')) return { ok: false, error: otherManagerReason(entries) };
    return manifestOnlyInputs(repo, commit, packageEntry, blobEntry(entries, '.npmrc'));
  }
  const lockfileEntry = blobEntry(entries, lockfilePath) as TreeEntry;
  const npmrcEntry = blobEntry(entries, '.npmrc');

  const packageText = await readBlob(repo, packageEntry.oid);
  const lockfileText = await readBlob(repo, lockfileEntry.oid);
  const npmrcText = npmrcEntry === null ? '' : await readBlob(repo, npmrcEntry.oid);
  if (packageText === null || lockfileText === null || npmrcText === null) {
    return { ok: false, error: `git could not read package.json, ${lockfilePath} or .npmrc at ${commit}` };
  }
  const manifest = parseJsonObject(packageText);
  if (manifest === null) return { ok: false, error: 'package.json is not a JSON object' };
  if (manifest.workspaces !== undefined) {
    return { ok: false, error: 'package.json declares npm workspaces, whose packages npm installs into the repository’s own folders; a shared layer holds only the root node_modules' };
  }
  const lockfile = parseJsonObject(lockfileText);
  if (lockfile === null) return { ok: false, error: `${lockfilePath} is not a JSON object` };
  const local = localTarballs(lockfile, lockfilePath);
  if (!local.ok) return local;
  if (local.packageCount === 0) return { ok: false, error: `${lockfilePath} lists no dependencies, so there is nothing to share` };

  const tarballEntries = await listTree(repo, commit, local.paths);
  if (!tarballEntries.ok) return tarballEntries;
  const files: InstallInputFile[] = [
    { path: 'package.json', mode: packageEntry.mode, oid: packageEntry.oid },
    { path: lockfilePath, mode: lockfileEntry.mode, oid: lockfileEntry.oid },
  ];
  if (npmrcEntry !== null) files.push({ path: '.npmrc', mode: npmrcEntry.mode, oid: npmrcEntry.oid });
  for (const path of local.paths) {
    const entry = blobEntry(tarballEntries.entries, path);
    if (entry === null) return { ok: false, error: `${lockfilePath} installs from ${path}, which is not a file in commit ${commit.slice(0, 12)}` };
    files.push({ path, mode: entry.mode, oid: entry.oid });
  }

  const key = layerKey([
    ['package.json', packageText],
    [lockfilePath, lockfileText],
    ['.npmrc', npmrcText],
    ...local.paths.map((path): [string, string] => [`file:${path}`, blobEntry(tarballEntries.entries, path)?.oid ?? '']),
  ]);
  return { ok: true, key, files, plan: { command: NPM_CI_COMMAND, keeps: 'node_modules', registry: npmrcRegistry(npmrcText), packages: local.packageCount } };
}

/**
 * The inputs of a package that commits no lockfile: package.json and `.npmrc`, installed with
 * `npm install`. The versions npm resolves then are kept in the layer, and reused for as long
 * as these two files stay the same, so every workspace of a run gets the same tree.
 */
async function manifestOnlyInputs(repo: Repository, commit: string, packageEntry: TreeEntry, npmrcEntry: TreeEntry | null): Promise<NpmInputs> {
  const packageText = await readBlob(repo, packageEntry.oid);
  const npmrcText = npmrcEntry === null ? '' : await readBlob(repo, npmrcEntry.oid);
  if (packageText === null || npmrcText === null) return { ok: false, error: `git could not read package.json or .npmrc at ${commit}` };
  const manifest = parseJsonObject(packageText);
  if (manifest === null) return { ok: false, error: 'package.json is not a JSON object' };
  if (manifest.workspaces !== undefined) {
    return { ok: false, error: 'package.json declares npm workspaces, whose packages npm installs into the repository’s own folders; a shared layer holds only the root node_modules' };
  }
  const specs = DEPENDENCY_FIELDS.flatMap((field) => Object.entries(objectField(manifest, field)));
  if (specs.length === 0) return { ok: false, error: 'package.json lists no dependencies, so there is nothing to share' };
  const local = specs.find(([, spec]) => typeof spec === 'string' && /^(file|link|workspace|portal):/.test(spec));
  if (local !== undefined) {
    return { ok: false, error: `package.json installs ${local[0]} from ${String(local[1])}, a folder of the repository, which npm links into the repository's own folders; commit a package-lock.json to share an install` };
  }
  const files: InstallInputFile[] = [{ path: 'package.json', mode: packageEntry.mode, oid: packageEntry.oid }];
  if (npmrcEntry !== null) files.push({ path: '.npmrc', mode: npmrcEntry.mode, oid: npmrcEntry.oid });
  const key = layerKey([
    ['install', 'package.json alone'],
    ['package.json', packageText],
    ['.npmrc', npmrcText],
  ]);
  return { ok: true, key, files, plan: { command: NPM_INSTALL_COMMAND, keeps: 'node_modules', registry: npmrcRegistry(npmrcText), packages: specs.length } };
}

/** The `registry=` an `.npmrc` sets, or null: npm then uses its default (or `npm_config_registry`). */
function npmrcRegistry(npmrcText: string): string | null {
  const line = npmrcText.split(/\r?\n/).find((text) => /^\s*registry\s*=/.test(text));
  return line === undefined ? null : (line.split('=').slice(1).join('=').trim() || null);
}

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'] as const;

function objectField(object: Record<string, unknown>, field: string): Record<string, unknown> {
  const value = object[field];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
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

function otherManagerReason(entries: ReadonlyMap<string, TreeEntry>): string {
  if (entries.has('yarn.lock')) return 'the repository installs with yarn (yarn.lock); shared installs read npm lockfiles only';
  return 'the repository installs with pnpm (pnpm-lock.yaml); shared installs read npm lockfiles only';
}

/**
 * The local tarballs (`file:` specs) a lockfile installs from, which the install directory
 * must hold, and how many packages it installs. Local directories are refused: npm links
 * them into the repository's own folders, outside any shared layer.
 */
function localTarballs(
  lockfile: Record<string, unknown>,
  lockfilePath: string,
): { readonly ok: true; readonly paths: string[]; readonly packageCount: number } | { readonly ok: false; readonly error: string } {
  const packages = lockfile.packages;
  if (typeof packages !== 'object' || packages === null) {
    return { ok: false, error: `${lockfilePath} has no "packages" section (lockfile version 1, from npm 6); run \`npm install\` with npm 7 or later and commit the new lockfile` };
  }
  const paths = new Set<string>();
  let packageCount = 0;
  for (const [location, value] of Object.entries(packages as Record<string, unknown>)) {
    if (location === '' || typeof value !== 'object' || value === null) continue;
    packageCount += 1;
    const entry = value as Record<string, unknown>;
    if (entry.link === true) {
      return { ok: false, error: `${lockfilePath} links the local package ${location} from the repository; a shared layer cannot hold what npm installs into the repository's own folders` };
    }
    const resolved = entry.resolved;
    if (typeof resolved !== 'string' || !resolved.startsWith('file:')) continue;
    const path = posix.normalize(resolved.slice('file:'.length));
    if (path.startsWith('/') || path === '..' || path.startsWith('../')) {
      return { ok: false, error: `${lockfilePath} installs ${location} from ${resolved}, outside the repository` };
    }
    paths.add(path);
  }
  return { ok: true, paths: [...paths].sort(), packageCount };
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

function blobEntry(entries: ReadonlyMap<string, TreeEntry>, path: string): TreeEntry | null {
  const entry = entries.get(path);
  return entry !== undefined && entry.type === 'blob' && entry.mode !== '120000' ? entry : null;
}

async function readBlob(repo: Repository, oid: string): Promise<string | null> {
  const result = await runGit(repo.root, ['cat-file', 'blob', oid]);
  return result.code === 0 ? result.stdout : null;
}

function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
