import { posix } from 'node:path';
import type { Repository } from '../git/repository.js';
import { npmrcRegistries } from './registry-config.js';
import { blobEntry, layerKey, listTree, parseJsonObject, readBlob, repositoryPathProblem, type DependencyInputs, type InstallInputFile, type ProjectInputs, type TreeEntry } from './input-files.js';
import { NPM_CI_COMMAND, NPM_INSTALL_COMMAND } from './npm-install.js';
import { readPnpmInputs, readYarnInputs } from './package-manager-inputs.js';
import { patternWorkspaceManifests } from './workspace-packages.js';

/** The files at a repository's root that say how its JavaScript dependencies are installed. */
export const PROJECT_FILES: readonly string[] = ['package.json', 'npm-shrinkwrap.json', 'package-lock.json', '.npmrc', 'yarn.lock', '.yarnrc', '.yarnrc.yml', 'pnpm-lock.yaml', 'pnpm-workspace.yaml'];

/**
 * Reads, from the tree at `commit` (not from any checkout), what an npm install of the
 * repository's root package needs, and computes its key: a sha256 over package.json, the
 * lockfile, `.npmrc`, the local tarballs' blob ids, node's major version, the platform and the
 * architecture. A package without a lockfile is installed from package.json alone, keyed by it
 * and `.npmrc`. A repository colony cannot install this way comes back as `{ ok: false }`
 * saying why.
 */
export async function readDependencyInputs(repo: Repository, commit: string): Promise<DependencyInputs> {
  const read = await readProjectInputs(repo, commit);
  return 'error' in read ? { ok: false, error: read.error, stopsRun: false } : read;
}

async function readProjectInputs(repo: Repository, commit: string): Promise<ProjectInputs> {
  const rootEntries = await listTree(repo, commit, PROJECT_FILES);
  if (!rootEntries.ok) return rootEntries;
  const entries = rootEntries.entries;
  const packageEntry = blobEntry(entries, 'package.json');
  if (packageEntry === null) return { ok: false, error: 'the repository has no package.json at its root' };
  const lockfilePath = ['npm-shrinkwrap.json', 'package-lock.json'].find((path) => blobEntry(entries, path) !== null);
  if (lockfilePath === undefined) {
    const config = (paths: readonly string[]): InstallInputFile[] =>
      paths.flatMap((path) => {
        const entry = blobEntry(entries, path);
        return entry === null ? [] : [{ path, mode: entry.mode, oid: entry.oid }];
      });
    const pnpmLock = blobEntry(entries, 'pnpm-lock.yaml');
    if (pnpmLock !== null) return readPnpmInputs(repo, commit, { packageEntry, lockfileEntry: pnpmLock, configEntries: config(['.npmrc']) }, blobEntry(entries, 'pnpm-workspace.yaml'));
    const yarnLock = blobEntry(entries, 'yarn.lock');
    if (yarnLock !== null) return readYarnInputs(repo, commit, { packageEntry, lockfileEntry: yarnLock, configEntries: config(['.npmrc', '.yarnrc', '.yarnrc.yml']) });
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
    if (entry === null) return { ok: false, error: `${lockfilePath} needs ${path}, which is not a file in commit ${commit.slice(0, 12)}` };
    files.push({ path, mode: entry.mode, oid: entry.oid });
  }

  const key = layerKey([
    ['package.json', packageText],
    [lockfilePath, lockfileText],
    ['.npmrc', npmrcText],
    ...local.paths.map((path): [string, string] => [`file:${path}`, blobEntry(tarballEntries.entries, path)?.oid ?? '']),
  ]);
  return { ok: true, key, files, plan: { command: NPM_CI_COMMAND, label: NPM_CI_COMMAND, keeps: 'node_modules', manager: 'npm', registry: npmrcRegistries(npmrcText).main, packages: local.packageCount } };
}

/**
 * The inputs of a package that commits no lockfile: package.json, `.npmrc` and the package.json
 * of each npm workspace package its `workspaces` patterns match, installed with `npm install`.
 * The versions npm resolves then are kept in the layer, and reused for as long as these files
 * stay the same, so every workspace of a run gets the same tree.
 */
async function manifestOnlyInputs(repo: Repository, commit: string, packageEntry: TreeEntry, npmrcEntry: TreeEntry | null): Promise<ProjectInputs> {
  const packageText = await readBlob(repo, packageEntry.oid);
  const npmrcText = npmrcEntry === null ? '' : await readBlob(repo, npmrcEntry.oid);
  if (packageText === null || npmrcText === null) return { ok: false, error: `git could not read package.json or .npmrc at ${commit}` };
  const manifest = parseJsonObject(packageText);
  if (manifest === null) return { ok: false, error: 'package.json is not a JSON object' };
  const manifests = await patternWorkspaceManifests(repo, commit, manifest.workspaces);
  if (!manifests.ok) return manifests;
  const packageTexts = await Promise.all(manifests.value.map(({ oid }) => readBlob(repo, oid)));
  if (packageTexts.includes(null)) return { ok: false, error: `git could not read the workspace packages' package.json at ${commit}` };
  const workspaceSpecs = packageTexts.flatMap((text) => {
    const parsed = parseJsonObject(text ?? '');
    return parsed === null ? [] : DEPENDENCY_FIELDS.flatMap((field) => Object.entries(objectField(parsed, field)));
  });
  const specs = [...DEPENDENCY_FIELDS.flatMap((field) => Object.entries(objectField(manifest, field))), ...workspaceSpecs];
  if (specs.length === 0) return { ok: false, error: 'package.json lists no dependencies, so there is nothing to share' };
  const local = specs.find(([, spec]) => typeof spec === 'string' && /^(file|link|workspace|portal):/.test(spec));
  if (local !== undefined) {
    return { ok: false, error: `package.json installs ${local[0]} from ${String(local[1])}, a folder of the repository, which npm links into the repository's own folders; commit a package-lock.json to share an install` };
  }
  const files: InstallInputFile[] = [{ path: 'package.json', mode: packageEntry.mode, oid: packageEntry.oid }];
  if (npmrcEntry !== null) files.push({ path: '.npmrc', mode: npmrcEntry.mode, oid: npmrcEntry.oid });
  files.push(...manifests.value);
  const key = layerKey([
    ['install', 'package.json alone'],
    ['package.json', packageText],
    ['.npmrc', npmrcText],
    ...manifests.value.map(({ path }, index): [string, string] => [path, packageTexts[index] ?? '']),
  ]);
  return { ok: true, key, files, plan: { command: NPM_INSTALL_COMMAND, label: NPM_INSTALL_COMMAND, keeps: 'node_modules', manager: 'npm', registry: npmrcRegistries(npmrcText).main, packages: specs.length } };
}

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'] as const;

function objectField(object: Record<string, unknown>, field: string): Record<string, unknown> {
  const value = object[field];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The files of the repository a lockfile's install reads besides package.json: the local
 * tarballs it installs from (`file:` specs), and the package.json of each local package folder
 * it links into node_modules (an npm workspace's packages, a `file:` folder); and how many
 * packages it installs, `packages/a/node_modules/…` (where versions of a workspace's
 * dependencies conflict with the root's) included.
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
    const outside = repositoryPathProblem(location);
    if (outside !== null) return { ok: false, error: `${lockfilePath} installs into ${location}, ${outside}` };
    if (!location.startsWith('node_modules/')) {
      const nested = location.indexOf('/node_modules/');
      // A local package folder npm links (a workspace's package): its manifest is an input.
      paths.add(`${nested === -1 ? location : location.slice(0, nested)}/package.json`);
      // Its own node_modules, for versions that conflict with the root's, is part of the layer.
      if (nested === -1) continue;
    }
    packageCount += 1;
    const entry = value as Record<string, unknown>;
    const resolved = entry.resolved;
    if (typeof resolved !== 'string') continue;
    if (entry.link === true) {
      const problem = repositoryPathProblem(resolved);
      if (problem !== null) return { ok: false, error: `${lockfilePath} links ${location} to ${resolved}, ${problem}` };
      continue;
    }
    if (!resolved.startsWith('file:')) continue;
    const path = posix.normalize(resolved.slice('file:'.length));
    if (repositoryPathProblem(path) !== null) {
      return { ok: false, error: `${lockfilePath} installs ${location} from ${resolved}, outside the repository` };
    }
    paths.add(path);
  }
  return { ok: true, paths: [...paths].sort(), packageCount };
}
