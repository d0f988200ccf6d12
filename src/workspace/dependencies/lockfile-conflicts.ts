import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readCheckoutFile, writeCheckoutFile } from '../files/confined-file.js';
import { describeFailure, runGit, type GitWorkTree } from '../git/git.js';
import { conflictStage, type ConflictSettler } from '../git/rebase-state.js';
import { errorMessage } from '../../errors/error-message.js';
import { parseJsonObject } from './input-files.js';
import { mergeJsonObjects } from './manifest-merge.js';
import { installEnvironment, type RunInstall } from './npm-install.js';

/**
 * Writes the lockfile again for package.json as it stands, from the lockfile given: versions it
 * already pins stay, what package.json adds is resolved from the registry. Nothing is installed.
 */
export const NPM_RELOCK_COMMAND = 'npm install --package-lock-only --ignore-scripts --no-audit --no-fund';

const MANIFEST = 'package.json';
const LOCKFILES = ['package-lock.json', 'npm-shrinkwrap.json'];
const DEFAULT_TIMEOUT_MS = 5 * 60_000;

export interface NpmConflictSettlerOptions {
  /** Where a private folder is made for each npm run (the layers' staging folder, whose collector knows the names). */
  readonly stagingDir: string;
  /** Runs npm, with the registry reachable (the sandbox's install runner in a run). */
  readonly runInstall: RunInstall;
  /** The environment npm's allow-list is read from; `process.env` when not given. */
  readonly environment?: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs?: number;
}

/**
 * Settles conflicts in the root package.json and npm lockfile of a rebase, which no agent
 * should have to untangle: two workers adding different packages at once. package.json is
 * merged key by key (`mergeJsonObjects`); then npm writes the lockfile again from main's
 * lockfile and the merged package.json (`NPM_RELOCK_COMMAND`, in a private folder holding only
 * those files and `.npmrc`), so it pins both sides' packages, and both files are staged. When
 * the two package.json files change one key differently, the project uses npm workspaces, or
 * npm fails, both files are left to the agent with their markers, and `unsettled` says why.
 * Other files are left alone.
 */
export function npmConflictSettler(options: NpmConflictSettlerOptions): ConflictSettler {
  return async (worktree, files) => {
    const ours = files.filter((file) => file === MANIFEST || LOCKFILES.includes(file));
    const others = files.filter((file) => !ours.includes(file));
    if (ours.length === 0) return { resolved: [], remaining: [...files] };
    const unsettled = await settle(worktree, ours, options);
    return unsettled === null ? { resolved: ours, remaining: others } : { resolved: [], remaining: [...files], unsettled };
  };
}

/** Settles and stages the conflicted root manifest files; null when done, else why not. */
async function settle(worktree: GitWorkTree, files: readonly string[], options: NpmConflictSettlerOptions): Promise<string | null> {
  const manifest = files.includes(MANIFEST) ? await mergedManifest(worktree) : await readCheckoutFile(worktree.path, MANIFEST);
  if (manifest === null) return `the two sides' changes to ${MANIFEST} touch the same keys differently`;
  if (parseJsonObject(manifest)?.workspaces !== undefined) return `${MANIFEST} declares npm workspaces, whose lockfile colony does not write again`;
  const lockfile = LOCKFILES.find((name) => files.includes(name)) ?? (await presentLockfile(worktree));
  // Main's lockfile is the base: what the workspace added comes from the merged package.json.
  const startingLockfile = lockfile === null ? null : files.includes(lockfile) ? await conflictStage(worktree, 2, lockfile) : await readCheckoutFile(worktree.path, lockfile);
  let relocked: string | null = null;
  if (lockfile !== null) {
    const written = await relock(worktree, manifest, { name: lockfile, text: startingLockfile }, options);
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

async function mergedManifest(worktree: GitWorkTree): Promise<string | null> {
  const [base, main, workspace] = await Promise.all([conflictStage(worktree, 1, MANIFEST), conflictStage(worktree, 2, MANIFEST), conflictStage(worktree, 3, MANIFEST)]);
  if (main === null || workspace === null) return null;
  return mergeJsonObjects(base ?? '{}', main, workspace);
}

async function presentLockfile(worktree: GitWorkTree): Promise<string | null> {
  for (const name of LOCKFILES) if ((await readCheckoutFile(worktree.path, name)) !== null) return name;
  return null;
}

/** Runs npm on the manifest and the starting lockfile in a private folder; the lockfile it wrote. */
async function relock(
  worktree: GitWorkTree,
  manifest: string,
  lockfile: { readonly name: string; readonly text: string | null },
  options: NpmConflictSettlerOptions,
): Promise<{ ok: true; lockfile: string } | { ok: false; error: string }> {
  let dir: string;
  try {
    await mkdir(options.stagingDir, { recursive: true });
    // The process id in the name lets the collector tell an abandoned folder from one in use.
    dir = await mkdtemp(join(options.stagingDir, `relock-${process.pid}-`));
  } catch (error) {
    return { ok: false, error: `colony could not make a folder to run npm in: ${errorMessage(error)}` };
  }
  try {
    await writeFile(join(dir, MANIFEST), manifest);
    if (lockfile.text !== null) await writeFile(join(dir, lockfile.name), lockfile.text);
    const npmrc = await readCheckoutFile(worktree.path, '.npmrc');
    if (npmrc !== null) await writeFile(join(dir, '.npmrc'), npmrc);
    const result = await options.runInstall({
      dir,
      command: NPM_RELOCK_COMMAND,
      environment: installEnvironment(options.environment ?? process.env),
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      registriesOnly: true,
    });
    if (!result.ok) return { ok: false, error: `npm could not write ${lockfile.name} for the merged ${MANIFEST}: ${result.error}` };
    return { ok: true, lockfile: await readFile(join(dir, lockfile.name), 'utf8') };
  } catch (error) {
    return { ok: false, error: `colony could not write ${lockfile.name} again: ${errorMessage(error)}` };
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
