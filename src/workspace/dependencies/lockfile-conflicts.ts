import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readCheckoutFile, writeCheckoutFile } from '../files/confined-file.js';
import { describeFailure, runGit, type GitWorkTree } from '../git/git.js';
import { conflictStage, type ConflictSettler } from '../git/rebase-state.js';
import { errorMessage } from '../../errors/error-message.js';
import { parseJsonObject } from './input-files.js';
import { mergeJsonObjects } from './manifest-merge.js';
import { installEnvironment, type RunInstall } from './npm-install.js';
import { relockCommand } from './package-manager-inputs.js';

/**
 * Writes the lockfile again for package.json as it stands, from the lockfile given: versions it
 * already pins stay, what package.json adds is resolved from the registry. Nothing is installed.
 */
export const NPM_RELOCK_COMMAND = 'npm install --package-lock-only --ignore-scripts --no-audit --no-fund';

const MANIFEST = 'package.json';
const NPM_LOCKFILES = ['package-lock.json', 'npm-shrinkwrap.json'];
const MANAGER_LOCKFILES = ['pnpm-lock.yaml', 'yarn.lock'] as const;
const LOCKFILES: readonly string[] = [...NPM_LOCKFILES, ...MANAGER_LOCKFILES];
/** What a relock reads besides package.json and the lockfile, copied from the checkout when there. */
const CONFIG_FILES = ['.npmrc', '.yarnrc.yml', 'pnpm-workspace.yaml'];
const DEFAULT_TIMEOUT_MS = 5 * 60_000;

export interface LockfileConflictSettlerOptions {
  /** Where a private folder is made for each npm run (the layers' staging folder, whose collector knows the names). */
  readonly stagingDir: string;
  /** Runs the package manager, with the registry reachable (the sandbox's install runner in a run). */
  readonly runInstall: RunInstall;
  /** The environment npm's allow-list is read from; `process.env` when not given. */
  readonly environment?: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs?: number;
}

/**
 * Settles conflicts in the root package.json and lockfile of a rebase, which no agent should
 * have to untangle: two workers adding different packages at once. package.json is merged key
 * by key (`mergeJsonObjects`); then the project's package manager writes the lockfile again
 * from main's lockfile and the merged package.json, in a private folder holding only those
 * files and the manager's configuration: npm (`NPM_RELOCK_COMMAND`), pnpm (`install
 * --lockfile-only`) or yarn 2+ (`install --mode=update-lockfile`), the last two at the version
 * the layer's install uses (`relockCommand`). The lockfile then pins both sides' packages, and
 * both files are staged. When the two package.json files change one key differently, the
 * project is a monorepo (its packages' manifests are not in the folder), it uses yarn 1, or the
 * manager fails, both files are left to the agent with their markers, and `unsettled` says
 * why. Other files are left alone.
 */
export function lockfileConflictSettler(options: LockfileConflictSettlerOptions): ConflictSettler {
  return async (worktree, files) => {
    const ours = files.filter((file) => file === MANIFEST || LOCKFILES.includes(file));
    const others = files.filter((file) => !ours.includes(file));
    if (ours.length === 0) return { resolved: [], remaining: [...files] };
    const unsettled = await settle(worktree, ours, options);
    return unsettled === null ? { resolved: ours, remaining: others } : { resolved: [], remaining: [...files], unsettled };
  };
}

/** Settles and stages the conflicted root manifest files; null when done, else why not. */
async function settle(worktree: GitWorkTree, files: readonly string[], options: LockfileConflictSettlerOptions): Promise<string | null> {
  const manifest = files.includes(MANIFEST) ? await mergedManifest(worktree) : await readCheckoutFile(worktree.path, MANIFEST);
  if (manifest === null) return `the two sides' changes to ${MANIFEST} touch the same keys differently`;
  if (parseJsonObject(manifest)?.workspaces !== undefined) return `${MANIFEST} declares workspaces, whose lockfile colony does not write again`;
  const configs = new Map<string, string>();
  for (const name of CONFIG_FILES) {
    const text = await readCheckoutFile(worktree.path, name);
    if (text !== null) configs.set(name, text);
  }
  if (/^packages:/m.test(configs.get('pnpm-workspace.yaml') ?? '')) return 'the project is a pnpm workspace, whose lockfile colony does not write again';
  const lockfile = LOCKFILES.find((name) => files.includes(name)) ?? (await presentLockfile(worktree));
  // Main's lockfile is the base: what the workspace added comes from the merged package.json.
  const startingLockfile = lockfile === null ? null : files.includes(lockfile) ? await conflictStage(worktree, 2, lockfile) : await readCheckoutFile(worktree.path, lockfile);
  let relocked: string | null = null;
  if (lockfile !== null) {
    const command = relockCommandFor(lockfile, manifest, startingLockfile, configs);
    if (!command.ok) return command.error;
    const written = await relock(manifest, { name: lockfile, text: startingLockfile }, configs, command.command, options);
    if (!written.ok) return written.error;
    relocked = written.lockfile;
  }
  try {
    await writeCheckoutFile(worktree.path, MANIFEST, manifest);
    if (lockfile !== null && relocked !== null) await writeCheckoutFile(worktree.path, lockfile, relocked);
  } catch (error) {
    return `colony could not write the settled files: ${errorMessage(error)}`;
  }
  const addArgs = ['add', '--', MANIFEST, ...(lockfile === null ? [] : [lockfile])];
  const added = await runGit(worktree, addArgs);
  return added.code === 0 ? null : describeFailure(addArgs, added);
}

/** The command that writes `lockfile` again: npm's, or pnpm's or yarn 2+'s as the project pins them. */
function relockCommandFor(lockfile: string, manifest: string, lockfileText: string | null, configs: ReadonlyMap<string, string>): { readonly ok: true; readonly command: string } | { readonly ok: false; readonly error: string } {
  if (lockfile !== 'pnpm-lock.yaml' && lockfile !== 'yarn.lock') return { ok: true, command: NPM_RELOCK_COMMAND };
  return relockCommand(lockfile, manifest, lockfileText ?? '', configs.get('.yarnrc.yml') ?? '');
}

async function mergedManifest(worktree: GitWorkTree): Promise<string | null> {
  const [base, main, workspace] = await Promise.all([conflictStage(worktree, 1, MANIFEST), conflictStage(worktree, 2, MANIFEST), conflictStage(worktree, 3, MANIFEST)]);
  if (main === null || workspace === null) return null;
  return mergeJsonObjects(base ?? '{}', main, workspace);
}

async function presentLockfile(worktree: GitWorkTree): Promise<string | null> {
  for (const name of LOCKFILES) if ((await readCheckoutFile(worktree.path, name)) !== null) return name;
  return null;
}

/** Runs the relock on the manifest, the starting lockfile and the configuration in a private folder; the lockfile it wrote. */
async function relock(
  manifest: string,
  lockfile: { readonly name: string; readonly text: string | null },
  configs: ReadonlyMap<string, string>,
  command: string,
  options: LockfileConflictSettlerOptions,
): Promise<{ ok: true; lockfile: string } | { ok: false; error: string }> {
  let dir: string;
  try {
    await mkdir(options.stagingDir, { recursive: true });
    // The process id in the name lets the collector tell an abandoned folder from one in use.
    dir = await mkdtemp(join(options.stagingDir, `relock-${process.pid}-`));
  } catch (error) {
    return { ok: false, error: `colony could not make a folder to write ${lockfile.name} in: ${errorMessage(error)}` };
  }
  try {
    await writeFile(join(dir, MANIFEST), manifest);
    if (lockfile.text !== null) await writeFile(join(dir, lockfile.name), lockfile.text);
    for (const [name, text] of configs) await writeFile(join(dir, name), text);
    const result = await options.runInstall({
      dir,
      command,
      environment: installEnvironment(options.environment ?? process.env),
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      registriesOnly: true,
    });
    const manager = lockfile.name === 'pnpm-lock.yaml' ? 'pnpm' : lockfile.name === 'yarn.lock' ? 'yarn' : 'npm';
    if (!result.ok) return { ok: false, error: `${manager} could not write ${lockfile.name} for the merged ${MANIFEST}: ${result.error}` };
    return { ok: true, lockfile: await readFile(join(dir, lockfile.name), 'utf8') };
  } catch (error) {
    return { ok: false, error: `colony could not write ${lockfile.name} again: ${errorMessage(error)}` };
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
