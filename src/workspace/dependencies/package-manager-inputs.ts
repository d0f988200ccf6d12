import type { Repository } from '../git/repository.js';
import { npmrcRegistries, yarnrcRegistries, yarnrcYmlRegistries } from './registry-config.js';
import { layerKey, listFiles, parseJsonObject, readBlob, repositoryPathProblem, type InstallInputFile, type ProjectInputs, type SetupPlan, type TreeEntry } from './input-files.js';
import { berryWorkspaces, namedFiles, patternWorkspaceManifests, pnpmImporters, pnpmLocalSources, pnpmPatches, workspaceManifests } from './workspace-packages.js';

/** A package manager other than npm, as a layer installs with it. */
interface PackageManager {
  readonly name: 'pnpm' | 'yarn';
  readonly lockfile: 'pnpm-lock.yaml' | 'yarn.lock';
  /** Its package on the npm registry. */
  readonly package: string;
  /** The version a project that pins none gets, from its lockfile; null when colony knows none for that lockfile. */
  readonly defaultVersion: (lockfileText: string) => string | null;
  /** Whether a version a project pins in `packageManager` is one this entry installs. */
  readonly takesVersion: (version: string) => boolean;
  /** Variables set for the install (`NAME=value` words for env), or empty. */
  readonly environment: string;
  /** The install's arguments: from the lockfile as it is, no lifecycle scripts, its cache in the install's folder (left out of the layer). */
  readonly installArgs: string;
  /** The file of its package that runs it. */
  readonly bin: string;
  /** What the layer keeps: `node_modules/`, or (yarn 2 and later) everything made beside the inputs, Plug'n'Play's `.pnp.cjs` included. */
  readonly keeps: SetupPlan['keeps'];
  /** The registry it uses when the project's configuration names none, or null for npm's. */
  readonly defaultRegistry: string | null;
  /** Variables the agents' `<name>` command runs with (a wrapper script sets them), or empty for a plain link. */
  readonly runEnvironment: string;
}

/**
 * The pnpm that reads a lockfile format as it was written: '9.0' is written by pnpm 9 and 10,
 * and 10 also reads the settings pnpm 10 projects keep in pnpm-workspace.yaml (`overrides`,
 * `patchedDependencies`), without which a frozen install refuses their lockfile. (pnpm 11
 * needs Node 22.)
 */
const PNPM_BY_LOCKFILE: Readonly<Record<string, string>> = { '9.0': '10', '6.0': '8', '5.4': '7', '5.3': '6' };

const PNPM: PackageManager = {
  name: 'pnpm',
  lockfile: 'pnpm-lock.yaml',
  package: 'pnpm',
  defaultVersion: (text) => PNPM_BY_LOCKFILE[/^lockfileVersion:\s*'?([\d.]+)'?/m.exec(text)?.[1] ?? ''] ?? null,
  takesVersion: () => true,
  environment: '',
  installArgs: 'install --frozen-lockfile --ignore-scripts --store-dir .pnpm-store',
  bin: 'bin/pnpm.cjs',
  keeps: 'node_modules',
  defaultRegistry: null,
  runEnvironment: '',
};

const YARN_REGISTRY = 'https://registry.yarnpkg.com/';

/** Yarn 1 ("classic"), whose lockfile says so on its first lines; yarn 2 and later write `__metadata:` instead. */
const YARN_CLASSIC: PackageManager = {
  name: 'yarn',
  lockfile: 'yarn.lock',
  package: 'yarn',
  defaultVersion: (text) => (isClassicLockfile(text) ? '1' : null),
  takesVersion: (version) => version.startsWith('1.'),
  environment: '',
  installArgs: 'install --frozen-lockfile --ignore-scripts --non-interactive --no-progress --cache-folder .yarn-cache',
  bin: 'bin/yarn.js',
  keeps: 'node_modules',
  defaultRegistry: YARN_REGISTRY,
  runEnvironment: '',
};

/** The yarn that writes a lockfile's `__metadata` version: 4 is yarn 2, 5 and 6 yarn 3, later ones yarn 4. */
function berryVersion(text: string): string | null {
  const format = Number(/^__metadata:\s*\n\s+version:\s*(\d+)/m.exec(text)?.[1] ?? Number.NaN);
  if (!Number.isInteger(format)) return null;
  return format <= 4 ? '2' : format <= 6 ? '3' : '4';
}

/**
 * Yarn 2 and later ("berry"), from its one-file build on the npm registry, for a project whose
 * `.yarnrc.yml` says `nodeLinker` is `pnp` (the default) or not. Everything kept goes where the
 * layer can hold it and git ignores it. Under Plug'n'Play the layer is `.pnp.cjs` (with
 * `.pnp.loader.mjs`) and `node_modules/`, holding the cache of zip archives `.pnp.cjs` names
 * (its own, not the machine's global one) and the unplugged packages. Any other linker manages
 * `node_modules/` itself and removes what it did not put there, so its cache stays in the
 * install's folder, out of the layer. The install state goes with yarn itself into
 * `node_modules/.colony-yarn/`. No builds, no telemetry, and the proxy setting read from the
 * proxy variables the setup's sandbox has (yarn 2 and later ignore those).
 */
function yarnBerry(plugAndPlay: boolean): PackageManager {
  return {
    name: 'yarn',
    lockfile: 'yarn.lock',
    package: '@yarnpkg/cli-dist',
    defaultVersion: berryVersion,
    takesVersion: (version) => !version.startsWith('0.') && !version.startsWith('1.'),
    environment: [
      'YARN_ENABLE_TELEMETRY=0',
      'YARN_ENABLE_GLOBAL_CACHE=false',
      `YARN_CACHE_FOLDER=${plugAndPlay ? 'node_modules/.yarn-cache' : '.yarn-cache'}`,
      'YARN_PNP_UNPLUGGED_FOLDER=node_modules/.yarn-unplugged',
      'YARN_INSTALL_STATE_PATH=.colony-yarn/install-state.gz',
      'YARN_IGNORE_PATH=1',
      'YARN_ENABLE_PROGRESS_BARS=false',
      '${HTTPS_PROXY:+YARN_HTTPS_PROXY=$HTTPS_PROXY}',
      '${HTTP_PROXY:+YARN_HTTP_PROXY=$HTTP_PROXY}',
    ].join(' '),
    installArgs: 'install --immutable --mode=skip-build',
    bin: 'bin/yarn.js',
    keeps: plugAndPlay ? 'made' : 'node_modules',
    defaultRegistry: YARN_REGISTRY,
    // The agents' yarn is the one the setup ran, not a `yarnPath` release the repository may not even hold.
    runEnvironment: 'YARN_IGNORE_PATH=1',
  };
}

/** The top-level `nodeLinker` of a `.yarnrc.yml`; `pnp` when it names none. */
function nodeLinkerOf(yarnrc: string): string {
  return /^nodeLinker:\s*["']?([\w-]+)/m.exec(yarnrc)?.[1] ?? 'pnp';
}

function isClassicLockfile(text: string): boolean {
  return /^# yarn lockfile v1$/m.test(text);
}

/** Whether a yarn project uses yarn 1: the `packageManager` it pins says so, else its lockfile's format does. */
function usesYarnClassic(packageManager: unknown, lockfileText: string): boolean {
  if (typeof packageManager === 'string' && packageManager.startsWith('yarn@')) return YARN_CLASSIC.takesVersion(packageManager.slice('yarn@'.length));
  return isClassicLockfile(lockfileText);
}

/** Folders of a yarn 2+ project whose files its install reads: plugins `.yarnrc.yml` names, patches the lockfile applies. */
const BERRY_INPUT_FOLDERS = ['.yarn/plugins', '.yarn/patches'];

export interface ManagerFiles {
  readonly packageEntry: TreeEntry;
  readonly lockfileEntry: TreeEntry;
  /** What the manager reads besides package.json and the lockfile: `.npmrc` (both), `.yarnrc` (yarn), a workspace package's package.json. */
  readonly configEntries: readonly InstallInputFile[];
}

/**
 * The inputs of a pnpm project (`pnpm-lock.yaml` at its root); see `readManagerInputs`. A pnpm
 * workspace (`pnpm-workspace.yaml`, which pnpm 10 also reads for settings) adds that file and
 * the package.json of every package its lockfile's importers name; patches pnpm applies
 * (`patchedDependencies`, in either file) are inputs too.
 */
export async function readPnpmInputs(repo: Repository, commit: string, files: ManagerFiles, workspaceEntry: TreeEntry | null): Promise<ProjectInputs> {
  const texts = await readTexts(repo, commit, files, 'pnpm-lock.yaml');
  if (!texts.ok) return texts;
  const workspaceText = workspaceEntry === null ? '' : await readBlob(repo, workspaceEntry.oid);
  if (workspaceText === null) return { ok: false, error: `git could not read pnpm-workspace.yaml at ${commit}` };
  const manifests = await workspaceManifests(repo, commit, workspaceEntry === null ? [] : pnpmImporters(texts.lockfileText), 'pnpm-lock.yaml');
  if (!manifests.ok) return manifests;
  const patchPaths = pnpmPatches(workspaceText, parseJsonObject(texts.packageText));
  const patches = await namedFiles(repo, commit, patchPaths, (path) => `pnpm's patchedDependencies name ${path}, which is not a file in commit ${commit.slice(0, 12)}`);
  if (!patches.ok) return patches;
  const sources = pnpmLocalSources(texts.lockfileText);
  const outside = sources.find((path) => repositoryPathProblem(path) !== null);
  if (outside !== undefined) return { ok: false, error: `pnpm-lock.yaml installs a package from ${outside}, outside the repository` };
  const local = await listFiles(repo, commit, sources);
  if (!local.ok) return local;
  const workspaceFiles = workspaceEntry === null ? [] : [{ path: 'pnpm-workspace.yaml', mode: workspaceEntry.mode, oid: workspaceEntry.oid }];
  const configEntries = [...files.configEntries, ...workspaceFiles, ...manifests.value, ...patches.value, ...local.files];
  // A package folder is both an importer and a local source at times: each file once.
  const unique = [...new Map(configEntries.map((entry) => [entry.path, entry])).values()];
  return readManagerInputs(repo, commit, PNPM, { ...files, configEntries: unique }, texts);
}

/**
 * The inputs of a yarn project (`yarn.lock` at its root): yarn 1 when `packageManager` pins it or
 * the lockfile is yarn 1's, else yarn 2 and later, with `.yarnrc.yml` and the files of
 * `.yarn/plugins/` and `.yarn/patches/`; see `readManagerInputs`. The package.json of each
 * workspace package is an input too: those the lockfile names for yarn 2 and later, those
 * package.json's `workspaces` patterns match for yarn 1, whose lockfile does not name them.
 */
export async function readYarnInputs(repo: Repository, commit: string, files: ManagerFiles): Promise<ProjectInputs> {
  const texts = await readTexts(repo, commit, files, 'yarn.lock');
  if (!texts.ok) return texts;
  const manifest = parseJsonObject(texts.packageText);
  if (manifest === null) return { ok: false, error: 'package.json is not a JSON object' };
  if (usesYarnClassic(manifest.packageManager, texts.lockfileText)) {
    const manifests = await patternWorkspaceManifests(repo, commit, manifest.workspaces);
    if (!manifests.ok) return manifests;
    return readManagerInputs(repo, commit, YARN_CLASSIC, { ...files, configEntries: [...files.configEntries, ...manifests.value] }, texts);
  }
  const manifests = await workspaceManifests(repo, commit, berryWorkspaces(texts.lockfileText), 'yarn.lock');
  if (!manifests.ok) return manifests;
  const folders = await listFiles(repo, commit, BERRY_INPUT_FOLDERS);
  if (!folders.ok) return folders;
  const yarnrcEntry = files.configEntries.find((entry) => entry.path === '.yarnrc.yml');
  const yarnrc = yarnrcEntry === undefined ? '' : ((await readBlob(repo, yarnrcEntry.oid)) ?? '');
  return readManagerInputs(repo, commit, yarnBerry(nodeLinkerOf(yarnrc) === 'pnp'), { ...files, configEntries: [...files.configEntries, ...folders.files, ...manifests.value] }, texts);
}

interface ManagerTexts {
  readonly packageText: string;
  readonly lockfileText: string;
}

async function readTexts(repo: Repository, commit: string, files: ManagerFiles, lockfile: string): Promise<({ readonly ok: true } & ManagerTexts) | { readonly ok: false; readonly error: string }> {
  const [packageText, lockfileText] = await Promise.all([readBlob(repo, files.packageEntry.oid), readBlob(repo, files.lockfileEntry.oid)]);
  if (packageText === null || lockfileText === null) return { ok: false, error: `git could not read package.json or ${lockfile} at ${commit}` };
  return { ok: true, packageText, lockfileText };
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
async function readManagerInputs(repo: Repository, commit: string, manager: PackageManager, found: ManagerFiles, { packageText, lockfileText }: ManagerTexts): Promise<ProjectInputs> {
  const configTexts = await Promise.all(found.configEntries.map(({ oid }) => readBlob(repo, oid)));
  if (configTexts.includes(null)) return { ok: false, error: `git could not read the configuration of ${manager.name} at ${commit}` };
  const manifest = parseJsonObject(packageText);
  if (manifest === null) return { ok: false, error: 'package.json is not a JSON object' };
  const version = managerVersion(manager, manifest.packageManager, lockfileText);
  if (!version.ok) return version;
  const spec = `${manager.package}@${version.version}`;
  const files: InstallInputFile[] = [
    { path: 'package.json', mode: found.packageEntry.mode, oid: found.packageEntry.oid },
    { path: manager.lockfile, mode: found.lockfileEntry.mode, oid: found.lockfileEntry.oid },
    ...found.configEntries,
  ];
  // The manager, moved into the layer after the install.
  const home = `.colony-${manager.name}`;
  const command = [...fetchAndRun(manager, spec, manager.installArgs), `mkdir -p node_modules/.bin`, `mv ${home} node_modules/${home}`, ...binCommand(manager, home)].join(' && ');
  const key = layerKey([
    // The whole command line: a layer made another way (another cache place, another wrapper) is another layer.
    ['install', command],
    ['package.json', packageText],
    [manager.lockfile, lockfileText],
    ...found.configEntries.map(({ path }, index): [string, string] => [path, configTexts[index] ?? '']),
  ]);
  const configText = (path: string): string | null => {
    const index = found.configEntries.findIndex((entry) => entry.path === path);
    return index === -1 ? null : (configTexts[index] ?? '');
  };
  // What the project names: yarn 2+'s server, yarn 1's registry, then npm's.
  const named =
    yarnrcYmlRegistries(configText('.yarnrc.yml') ?? '').main ?? yarnrcRegistries(configText('.yarnrc') ?? '').main ?? npmrcRegistries(configText('.npmrc') ?? '').main;
  const registry = named ?? manager.defaultRegistry;
  return { ok: true, key, files, plan: { command, label: `${manager.name}@${version.version} ${manager.installArgs}`, keeps: manager.keeps, manager: manager.name, registry, packages: lockfilePackageCount(manager, lockfileText) } };
}

/**
 * The steps that fetch `spec` (`pnpm@10`) from the npm registry into `.colony-<name>/` beside
 * the inputs and run it with `args` and its environment; pnpm and yarn bundle their
 * dependencies, so the tarball is the whole program.
 */
function fetchAndRun(manager: PackageManager, spec: string, args: string): string[] {
  const home = `.colony-${manager.name}`;
  return [
    `mkdir ${home}`,
    `npm pack --silent --pack-destination ${home} ${spec} >/dev/null`,
    `tar -xzf ${home}/*.tgz -C ${home} --strip-components=1`,
    `rm ${home}/*.tgz`,
    `${manager.environment === '' ? '' : `env ${manager.environment} `}node ${home}/${manager.bin} ${args}`,
  ];
}

/** How pnpm and yarn 2+ write their lockfile for package.json without installing anything. */
const RELOCK_ARGS = { pnpm: 'install --lockfile-only --ignore-scripts', yarn: 'install --mode=update-lockfile' } as const;

/**
 * A command that writes `pnpm-lock.yaml` or `yarn.lock` again for the package.json beside it,
 * starting from the lockfile given (what it pins stays, what package.json adds is resolved), by
 * the manager and version the layer's install would use; or why there is none (yarn 1 has no
 * install that writes only its lockfile, or colony knows no manager for the lockfile).
 */
export function relockCommand(
  lockfile: 'pnpm-lock.yaml' | 'yarn.lock',
  packageText: string,
  lockfileText: string,
  yarnrcText: string,
): { readonly ok: true; readonly command: string } | { readonly ok: false; readonly error: string } {
  const manifest = parseJsonObject(packageText);
  if (manifest === null) return { ok: false, error: 'package.json is not a JSON object' };
  const pinned = manifest.packageManager;
  if (lockfile === 'yarn.lock' && usesYarnClassic(pinned, lockfileText)) return { ok: false, error: 'yarn 1 has no install that writes only its lockfile, so colony leaves yarn.lock to the agent' };
  const manager = lockfile === 'pnpm-lock.yaml' ? PNPM : yarnBerry(nodeLinkerOf(yarnrcText) === 'pnp');
  const version = managerVersion(manager, pinned, lockfileText);
  if (!version.ok) return version;
  return { ok: true, command: fetchAndRun(manager, `${manager.package}@${version.version}`, RELOCK_ARGS[manager.name]).join(' && ') };
}

/**
 * Puts the manager on the agents' PATH as `node_modules/.bin/<name>`: a relative link to its
 * file, or a two-line script that sets its `runEnvironment` and runs it from beside itself.
 */
function binCommand(manager: PackageManager, home: string): string[] {
  const bin = `node_modules/.bin/${manager.name}`;
  if (manager.runEnvironment === '') return [`ln -sf ../${home}/${manager.bin} ${bin}`];
  const line = `${manager.runEnvironment} exec node "$(dirname "$0")/../${home}/${manager.bin}" "$@"`;
  return [`echo '#!/bin/sh' > ${bin}`, `echo '${line}' >> ${bin}`, `chmod 755 ${bin}`];
}

function managerVersion(manager: PackageManager, packageManager: unknown, lockfileText: string): { readonly ok: true; readonly version: string } | { readonly ok: false; readonly error: string } {
  if (typeof packageManager === 'string' && packageManager.startsWith(`${manager.name}@`)) {
    const version = packageManager.slice(manager.name.length + 1).split('+')[0] ?? '';
    if (/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version) && manager.takesVersion(version)) return { ok: true, version };
    return { ok: false, error: `package.json's packageManager is ${packageManager}, which names no ${manager.name} version colony can fetch from the npm registry` };
  }
  const version = manager.defaultVersion(lockfileText);
  if (version !== null) return { ok: true, version };
  if (manager.name === 'yarn') return { ok: false, error: 'yarn.lock says no format colony knows a yarn for: pin one with "packageManager": "yarn@<version>" in package.json' };
  const format = /^lockfileVersion:\s*'?([\d.]+)'?/m.exec(lockfileText)?.[1] ?? '(none)';
  return { ok: false, error: `${manager.lockfile} has lockfileVersion ${format}, which colony does not know a ${manager.name} for: pin one with "packageManager": "${manager.name}@<version>" in package.json` };
}

/** How many packages the lockfile lists (pnpm's `packages:` section, yarn's entries), or null when colony cannot read it. */
function lockfilePackageCount(manager: PackageManager, lockfileText: string): number | null {
  if (manager.name === 'yarn') {
    // Yarn 2 and later also list their own metadata and the project itself (`demo@workspace:.`).
    return lockfileText.split('\n').filter((line) => /^\S.*:\s*$/.test(line) && !line.startsWith('#') && !line.startsWith('__metadata') && !line.includes('@workspace:')).length;
  }
  const section = /^packages:\n((?:[ \t].*\n|\n)*)/m.exec(`${lockfileText}\n`)?.[1];
  if (section === undefined) return null;
  return section.split('\n').filter((line) => /^ {2}\S.*:\s*$/.test(line)).length;
}
