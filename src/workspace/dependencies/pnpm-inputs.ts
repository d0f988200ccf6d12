import type { Repository } from '../git/repository.js';
import { layerKey, npmrcRegistry, parseJsonObject, readBlob, type InstallInputFile, type ProjectInputs, type TreeEntry } from './input-files.js';

/** The pnpm a lockfile format was written by, for a project whose package.json pins none (`packageManager`). */
const PNPM_BY_LOCKFILE: Readonly<Record<string, string>> = { '9.0': '9', '6.0': '8', '5.4': '7', '5.3': '6' };

/**
 * The inputs of a pnpm project (`pnpm-lock.yaml` at its root): package.json, the lockfile and
 * `.npmrc` (which pnpm reads too), installed with `pnpm install --frozen-lockfile
 * --ignore-scripts` by the pnpm the project pins in `packageManager` (`pnpm@9.15.0`), else the
 * major version that writes its lockfile's format, fetched from the npm registry by `npm exec`
 * (which checks the tarball against the registry's integrity hash), never from elsewhere. pnpm's
 * store is made in the install's folder and left there: the layer, shared by every workspace,
 * holds `node_modules/` with its `.pnpm/` folder, whose links are relative, and pnpm itself
 * (`node_modules/.colony-pnpm/`, linked as `node_modules/.bin/pnpm`) for the project's scripts
 * that call it.
 */
export async function readPnpmInputs(
  repo: Repository,
  commit: string,
  found: { readonly packageEntry: TreeEntry; readonly lockfileEntry: TreeEntry; readonly npmrcEntry: TreeEntry | null; readonly workspaceEntry: TreeEntry | null },
): Promise<ProjectInputs> {
  if (found.workspaceEntry !== null) {
    return { ok: false, error: 'the repository is a pnpm workspace (pnpm-workspace.yaml), whose packages pnpm installs into their own folders; a shared layer holds only the root node_modules' };
  }
  const packageText = await readBlob(repo, found.packageEntry.oid);
  const lockfileText = await readBlob(repo, found.lockfileEntry.oid);
  const npmrcText = found.npmrcEntry === null ? '' : await readBlob(repo, found.npmrcEntry.oid);
  if (packageText === null || lockfileText === null || npmrcText === null) return { ok: false, error: `git could not read package.json, pnpm-lock.yaml or .npmrc at ${commit}` };
  const manifest = parseJsonObject(packageText);
  if (manifest === null) return { ok: false, error: 'package.json is not a JSON object' };
  const pnpm = pnpmVersion(manifest.packageManager, lockfileText);
  if (!pnpm.ok) return pnpm;
  const files: InstallInputFile[] = [
    { path: 'package.json', mode: found.packageEntry.mode, oid: found.packageEntry.oid },
    { path: 'pnpm-lock.yaml', mode: found.lockfileEntry.mode, oid: found.lockfileEntry.oid },
  ];
  if (found.npmrcEntry !== null) files.push({ path: '.npmrc', mode: found.npmrcEntry.mode, oid: found.npmrcEntry.oid });
  const key = layerKey([
    ['install', pnpm.spec],
    ['package.json', packageText],
    ['pnpm-lock.yaml', lockfileText],
    ['.npmrc', npmrcText],
  ]);
  // pnpm itself goes into the layer too, so the project's scripts and its agents find `pnpm` (node_modules/.bin is on their PATH).
  const command = [
    `npm exec --yes --package=${pnpm.spec} -- pnpm install --frozen-lockfile --ignore-scripts --store-dir .pnpm-store`,
    `npm install --prefix node_modules/.colony-pnpm --no-save --no-package-lock --ignore-scripts --no-audit --no-fund ${pnpm.spec}`,
    'mkdir -p node_modules/.bin',
    'ln -sf ../.colony-pnpm/node_modules/pnpm/bin/pnpm.cjs node_modules/.bin/pnpm',
  ].join(' && ');
  return { ok: true, key, files, plan: { command, keeps: 'node_modules', registry: npmrcRegistry(npmrcText), packages: lockfilePackageCount(lockfileText) } };
}

/** `pnpm@9.15.0` from `packageManager` (its `+sha512…` suffix left out), else `pnpm@9` from the lockfile's format. */
function pnpmVersion(packageManager: unknown, lockfileText: string): { readonly ok: true; readonly spec: string } | { readonly ok: false; readonly error: string } {
  if (typeof packageManager === 'string' && packageManager.startsWith('pnpm@')) {
    const version = packageManager.slice('pnpm@'.length).split('+')[0] ?? '';
    if (/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version)) return { ok: true, spec: `pnpm@${version}` };
    return { ok: false, error: `package.json's packageManager is ${packageManager}, which names no pnpm version colony can fetch from the npm registry` };
  }
  const format = /^lockfileVersion:\s*'?([\d.]+)'?/m.exec(lockfileText)?.[1] ?? '';
  const major = PNPM_BY_LOCKFILE[format];
  if (major === undefined) return { ok: false, error: `pnpm-lock.yaml has lockfileVersion ${format === '' ? '(none)' : format}, which colony does not know a pnpm for: pin one with "packageManager": "pnpm@<version>" in package.json` };
  return { ok: true, spec: `pnpm@${major}` };
}

/** How many packages the lockfile's `packages:` section lists, or null when it has none colony can read. */
function lockfilePackageCount(lockfileText: string): number | null {
  const section = /^packages:\n((?:[ \t].*\n|\n)*)/m.exec(`${lockfileText}\n`)?.[1];
  if (section === undefined) return null;
  return section.split('\n').filter((line) => /^ {2}\S.*:\s*$/.test(line)).length;
}
