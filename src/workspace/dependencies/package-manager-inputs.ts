import type { Repository } from '../git/repository.js';
import { layerKey, npmrcRegistry, parseJsonObject, readBlob, type InstallInputFile, type ProjectInputs, type TreeEntry } from './input-files.js';

/** A package manager other than npm, as a layer installs with it. */
interface PackageManager {
  readonly name: 'pnpm' | 'yarn';
  readonly lockfile: 'pnpm-lock.yaml' | 'yarn.lock';
  /** Its package on the npm registry, and the version a project that pins none gets, from its lockfile; null when colony knows none for that lockfile. */
  readonly defaultVersion: (lockfileText: string) => string | null;
  /** The install's arguments: from the lockfile as it is, no lifecycle scripts, its cache in the install's folder (left out of the layer). */
  readonly installArgs: string;
  /** The file of its package that runs it. */
  readonly bin: string;
}

/** The pnpm a lockfile format was written by. */
const PNPM_BY_LOCKFILE: Readonly<Record<string, string>> = { '9.0': '9', '6.0': '8', '5.4': '7', '5.3': '6' };

const PNPM: PackageManager = {
  name: 'pnpm',
  lockfile: 'pnpm-lock.yaml',
  defaultVersion: (text) => PNPM_BY_LOCKFILE[/^lockfileVersion:\s*'?([\d.]+)'?/m.exec(text)?.[1] ?? ''] ?? null,
  installArgs: 'install --frozen-lockfile --ignore-scripts --store-dir .pnpm-store',
  bin: 'bin/pnpm.cjs',
};

/** Yarn 1 ("classic"), whose lockfile says so on its first lines; yarn 2 and later write `__metadata:` instead. */
const YARN_CLASSIC: PackageManager = {
  name: 'yarn',
  lockfile: 'yarn.lock',
  defaultVersion: (text) => (/^# yarn lockfile v1$/m.test(text) ? '1' : null),
  installArgs: 'install --frozen-lockfile --ignore-scripts --non-interactive --no-progress --cache-folder .yarn-cache',
  bin: 'bin/yarn.js',
};

export interface ManagerFiles {
  readonly packageEntry: TreeEntry;
  readonly lockfileEntry: TreeEntry;
  /** Configuration the manager reads besides package.json: `.npmrc` (both), `.yarnrc` (yarn). */
  readonly configEntries: readonly { readonly path: string; readonly entry: TreeEntry }[];
}

/** The inputs of a pnpm project (`pnpm-lock.yaml` at its root); see `readManagerInputs`. */
export function readPnpmInputs(repo: Repository, commit: string, files: ManagerFiles, workspaceEntry: TreeEntry | null): Promise<ProjectInputs> {
  if (workspaceEntry !== null) {
    return Promise.resolve({ ok: false, error: 'the repository is a pnpm workspace (pnpm-workspace.yaml), whose packages pnpm installs into their own folders; a shared layer holds only the root node_modules' });
  }
  return readManagerInputs(repo, commit, PNPM, files);
}

/** The inputs of a yarn project (`yarn.lock` at its root): yarn 1 only; see `readManagerInputs`. */
export function readYarnInputs(repo: Repository, commit: string, files: ManagerFiles): Promise<ProjectInputs> {
  return readManagerInputs(repo, commit, YARN_CLASSIC, files);
}

/**
 * The inputs of a project installed by pnpm or yarn: package.json, the lockfile and the
 * manager's configuration, installed from the lockfile as it is with no lifecycle scripts, by
 * the version the project pins in `packageManager` (`pnpm@9.15.0`, its `+sha512…` suffix left
 * out), else the major version that writes the lockfile's format, fetched from the npm registry
 * by `npm pack` (which checks the tarball against the registry's integrity hash), never from
 * elsewhere. Its cache is made in the install's folder and left there: the layer holds
 * `node_modules/`, whose links are relative, and the manager itself
 * (`node_modules/.colony-<name>/`, linked as `node_modules/.bin/<name>`) for the project's
 * scripts that call it.
 */
async function readManagerInputs(repo: Repository, commit: string, manager: PackageManager, found: ManagerFiles): Promise<ProjectInputs> {
  const packageText = await readBlob(repo, found.packageEntry.oid);
  const lockfileText = await readBlob(repo, found.lockfileEntry.oid);
  const configTexts = await Promise.all(found.configEntries.map(({ entry }) => readBlob(repo, entry.oid)));
  if (packageText === null || lockfileText === null || configTexts.includes(null)) return { ok: false, error: `git could not read package.json, ${manager.lockfile} or its configuration at ${commit}` };
  const manifest = parseJsonObject(packageText);
  if (manifest === null) return { ok: false, error: 'package.json is not a JSON object' };
  const version = managerVersion(manager, manifest.packageManager, lockfileText);
  if (!version.ok) return version;
  const spec = `${manager.name}@${version.version}`;
  const files: InstallInputFile[] = [
    { path: 'package.json', mode: found.packageEntry.mode, oid: found.packageEntry.oid },
    { path: manager.lockfile, mode: found.lockfileEntry.mode, oid: found.lockfileEntry.oid },
    ...found.configEntries.map(({ path, entry }) => ({ path, mode: entry.mode, oid: entry.oid })),
  ];
  const key = layerKey([
    ['install', spec],
    ['package.json', packageText],
    [manager.lockfile, lockfileText],
    ...found.configEntries.map(({ path }, index): [string, string] => [path, configTexts[index] ?? '']),
  ]);
  // The manager's own package, unpacked beside the inputs and moved into the layer after the
  // install; pnpm and yarn bundle their dependencies, so the tarball is the whole program.
  const home = `.colony-${manager.name}`;
  const command = [
    `mkdir ${home}`,
    `npm pack --silent --pack-destination ${home} ${spec} >/dev/null`,
    `tar -xzf ${home}/${manager.name}-*.tgz -C ${home} --strip-components=1`,
    `rm ${home}/${manager.name}-*.tgz`,
    `node ${home}/${manager.bin} ${manager.installArgs}`,
    `mkdir -p node_modules/.bin`,
    `mv ${home} node_modules/${home}`,
    `ln -sf ../${home}/${manager.bin} node_modules/.bin/${manager.name}`,
  ].join(' && ');
  const npmrcIndex = found.configEntries.findIndex(({ path }) => path === '.npmrc');
  const registry = npmrcIndex === -1 ? null : npmrcRegistry(configTexts[npmrcIndex] ?? '');
  return { ok: true, key, files, plan: { command, keeps: 'node_modules', registry, packages: lockfilePackageCount(manager, lockfileText) } };
}

function managerVersion(manager: PackageManager, packageManager: unknown, lockfileText: string): { readonly ok: true; readonly version: string } | { readonly ok: false; readonly error: string } {
  if (typeof packageManager === 'string' && packageManager.startsWith(`${manager.name}@`)) {
    const version = packageManager.slice(manager.name.length + 1).split('+')[0] ?? '';
    if (manager.name === 'yarn' && !version.startsWith('1.')) {
      return { ok: false, error: `package.json pins ${packageManager}; colony installs yarn 1 only, not yarn 2 and later (Plug'n'Play): workers start without an install` };
    }
    if (/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version)) return { ok: true, version };
    return { ok: false, error: `package.json's packageManager is ${packageManager}, which names no ${manager.name} version colony can fetch from the npm registry` };
  }
  const version = manager.defaultVersion(lockfileText);
  if (version !== null) return { ok: true, version };
  if (manager.name === 'yarn') return { ok: false, error: "yarn.lock was written by yarn 2 or later, which colony does not install yet (Plug'n'Play included): workers start without an install" };
  const format = /^lockfileVersion:\s*'?([\d.]+)'?/m.exec(lockfileText)?.[1] ?? '(none)';
  return { ok: false, error: `${manager.lockfile} has lockfileVersion ${format}, which colony does not know a ${manager.name} for: pin one with "packageManager": "${manager.name}@<version>" in package.json` };
}

/** How many packages the lockfile lists (pnpm's `packages:` section, yarn's entries), or null when colony cannot read it. */
function lockfilePackageCount(manager: PackageManager, lockfileText: string): number | null {
  if (manager.name === 'yarn') return lockfileText.split('\n').filter((line) => /^\S.*:\s*$/.test(line) && !line.startsWith('#')).length;
  const section = /^packages:\n((?:[ \t].*\n|\n)*)/m.exec(`${lockfileText}\n`)?.[1];
  if (section === undefined) return null;
  return section.split('\n').filter((line) => /^ {2}\S.*:\s*$/.test(line)).length;
}
