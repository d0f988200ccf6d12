import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { discoverGitDirs, driverOverrides } from './git-config-drivers.js';

/** What one git invocation produced. A non-zero `code` is data, not an exception. */
export interface GitResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunGitOptions {
  /** Extra environment variables, applied last (they win over colony's defaults). */
  readonly env?: Readonly<Record<string, string>>;
  /** Written to git's stdin; without it stdin is closed at once so git never waits on it. */
  readonly input?: string;
  /** The file mode creation mask git runs with, when it must differ from colony's own (see `updateCheckout`). */
  readonly umask?: number;
}

/**
 * A checkout colony runs git in with its git directory named explicitly (`--git-dir` and
 * `--work-tree`), never found through the checkout's `.git`: a workspace's `.git` file is inside
 * the directory an agent writes, so an agent could point it at a repository of its own making,
 * with its own hooks and configuration. A `Workspace` is one.
 */
export interface GitWorkTree {
  /** Absolute path of the checkout's top directory. */
  readonly path: string;
  /** Absolute path of its own git directory, as recorded when the checkout was made. */
  readonly gitDir: string;
}

/**
 * Where a git command runs: a `GitWorkTree`, or a directory in which git finds the repository
 * itself (the user's checkout, a repository colony made; never a workspace).
 */
export type GitPlace = string | GitWorkTree;

/** The identity on every commit colony makes, so no commit depends on the user's config. */
export const COLONY_IDENTITY = { name: 'colony', email: 'colony@localhost' } as const;

/**
 * Settings that let a repository's own config neither run anything nor block or slow colony's
 * git calls: hooks, an fsmonitor, credential helpers, an askpass or ssh command, signing and
 * signature checks would run programs the configuration names (and an agent may have written
 * it); a pager or colors would corrupt parsed output; recursing into submodules would run git
 * in repositories an agent made; rebase conveniences would change what a rebase does. Drivers
 * named in the configuration are made harmless per call (`git-config-drivers.ts`), and an
 * editor never runs (GIT_EDITOR, GIT_SEQUENCE_EDITOR).
 */
const HARDENING_CONFIG: readonly string[] = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.sshCommand=ssh',
  'core.askPass=',
  'credential.helper=',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  'log.showSignature=false',
  'merge.verifySignatures=false',
  'submodule.recurse=false',
  'core.pager=cat',
  'color.ui=false',
  'rebase.autoStash=false',
  'rebase.autoSquash=false',
  'rebase.updateRefs=false',
  'rebase.backend=merge',
  'rebase.abbreviateCommands=false',
  'advice.detachedHead=false',
  'advice.skippedCherryPicks=false',
];

const OUTPUT_LIMIT_BYTES = 256 * 1024 * 1024;

/**
 * What git may see of colony's environment. Nothing else is passed: not API keys (a hook or
 * an fsmonitor an agent configured in the repository would run with them), and no GIT_*
 * variable (one left over from a hook, such as GIT_DIR or GIT_INDEX_FILE, would point git at
 * another repository).
 */
const INHERITED_VARIABLES = ['PATH', 'HOME', 'TMPDIR', 'TZ', 'USER', 'LOGNAME', 'SSH_AUTH_SOCK', 'SSH_AGENT_PID'];

/**
 * The environment git runs with: an allow-list of the parent's, the user's global and system
 * config and attributes switched off, no editor or terminal prompt, no replacement objects (an
 * agent could plant `refs/replace/` to change what colony reads), stable English messages,
 * colony's identity, and `settings` as command-line configuration (GIT_CONFIG_COUNT, which
 * takes any key, and which git passes on to the git processes it starts).
 */
function gitEnvironment(extra: Readonly<Record<string, string>> | undefined, settings: readonly (readonly [string, string])[]): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {};
  for (const name of INHERITED_VARIABLES) {
    const value = process.env[name];
    if (value !== undefined) environment[name] = value;
  }
  Object.assign(environment, {
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_EDITOR: 'true',
    GIT_SEQUENCE_EDITOR: 'true',
    GIT_MERGE_AUTOEDIT: 'no',
    GIT_AUTHOR_NAME: COLONY_IDENTITY.name,
    GIT_AUTHOR_EMAIL: COLONY_IDENTITY.email,
    GIT_COMMITTER_NAME: COLONY_IDENTITY.name,
    GIT_COMMITTER_EMAIL: COLONY_IDENTITY.email,
    LC_ALL: 'C',
    LANGUAGE: 'C',
  });
  environment.GIT_CONFIG_COUNT = String(settings.length);
  settings.forEach(([key, value], index) => {
    environment[`GIT_CONFIG_KEY_${index}`] = key;
    environment[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  if (extra !== undefined) Object.assign(environment, extra);
  return environment;
}

/** How to start git for one call, or why colony will not. */
type Invocation =
  | { readonly ok: true; readonly cwd: string; readonly locationArgs: readonly string[]; readonly env: NodeJS.ProcessEnv }
  | { readonly ok: false; readonly cwd: string; readonly error: string };

/** The git directory named in `args` (`--git-dir`) or in `extra` (GIT_DIR), if any. */
function namedGitDir(args: readonly string[], extra: Readonly<Record<string, string>> | undefined): string | null {
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    if (arg === '--git-dir') return args[index + 1] ?? null;
    if (arg.startsWith('--git-dir=')) return arg.slice('--git-dir='.length);
  }
  return extra?.GIT_DIR ?? null;
}

function prepareInvocation(place: GitPlace, args: readonly string[], extra: Readonly<Record<string, string>> | undefined): Invocation {
  const cwd = typeof place === 'string' ? place : place.path;
  const locationArgs = typeof place === 'string' ? [] : [`--git-dir=${place.gitDir}`, `--work-tree=${place.path}`];
  const named = typeof place === 'string' ? namedGitDir(args, extra) : place.gitDir;
  const overrides = driverOverrides(named === null ? discoverGitDirs(cwd) : [named]);
  if (!overrides.ok) return { ok: false, cwd, error: overrides.error };
  return { ok: true, cwd, locationArgs, env: gitEnvironment(extra, overrides.settings) };
}

/** A child that fails at once like git would, for a call colony refuses to make. */
function refusedChild(message: string): ChildProcessWithoutNullStreams {
  return spawn('/bin/sh', ['-c', 'printf "%s\\n" "$1" >&2; exit 128', 'sh', message], { env: { PATH: process.env.PATH ?? '' }, detached: true, stdio: 'pipe' });
}

/**
 * Starts `git <args>` at `place` without a shell, hardened and with colony's environment, its
 * three standard streams piped. For the long-lived git processes colony talks to; one-shot
 * commands go through `runGit`. When colony refuses to run git there, the child is one that
 * prints why and exits 128, as a failing git would.
 */
export function spawnGit(place: GitPlace, args: readonly string[], env?: Readonly<Record<string, string>>, umask?: number): ChildProcessWithoutNullStreams {
  const invocation = prepareInvocation(place, args, env);
  if (!invocation.ok) return refusedChild(invocation.error);
  const fullArgs = [...HARDENING_CONFIG.flatMap((setting) => ['-c', setting]), ...invocation.locationArgs, ...args];
  // Its own process group: a Ctrl-C in the terminal asks colony to stop after the current
  // step, and must not kill a git command half-way through updating files or refs.
  const options = { cwd: invocation.cwd, env: invocation.env, detached: true, stdio: 'pipe' } as const;
  if (umask === undefined) return spawn('git', fullArgs, options);
  return spawn('/bin/sh', ['-c', `umask ${umask.toString(8).padStart(3, '0')}; exec git "$@"`, 'git', ...fullArgs], options);
}

/**
 * Runs `git <args>` at `place` without a shell. Never throws: a non-zero exit comes back as
 * `code`; a git that could not be started comes back as code 127, one killed by a signal as
 * code 128, and a call colony refuses to make (see `driverOverrides`) as code 128 too, with
 * the reason in `stderr`.
 */
export function runGit(place: GitPlace, args: readonly string[], options: RunGitOptions = {}): Promise<GitResult> {
  const cwd = typeof place === 'string' ? place : place.path;
  return collectOutput(spawnGit(place, args, options.env, options.umask), cwd, options.input);
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, "'\\''")}'`;
}

/**
 * Runs several git commands one after another at `place`, stopping at the first that fails, as
 * one child of this process: `/bin/sh` starts the git processes. Starting a process from a large
 * Node process costs far more than from a shell, and merges run these pairs constantly. The
 * result is the first failure's (or the last command's) exit code, with everything printed.
 */
export function runGitSequence(place: GitPlace, commands: readonly (readonly string[])[]): Promise<GitResult> {
  const invocation = prepareInvocation(place, commands.flat(), undefined);
  if (!invocation.ok) return collectOutput(refusedChild(invocation.error), invocation.cwd, undefined);
  const prefix = [...HARDENING_CONFIG.flatMap((setting) => ['-c', setting]), ...invocation.locationArgs];
  const script = commands.map((args) => ['git', ...prefix, ...args].map(shellQuote).join(' ')).join(' && ');
  const child = spawn('/bin/sh', ['-c', script], { cwd: invocation.cwd, env: invocation.env, detached: true, stdio: 'pipe' });
  return collectOutput(child, invocation.cwd, undefined);
}

function collectOutput(child: ChildProcessWithoutNullStreams, cwd: string, input: string | undefined): Promise<GitResult> {
  return new Promise((resolve) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let size = 0;
    let overflow = false;
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > OUTPUT_LIMIT_BYTES) {
        if (!overflow) child.kill('SIGKILL');
        overflow = true;
        return;
      }
      into.push(chunk);
    };
    child.stdout.on('data', collect(stdout));
    child.stderr.on('data', collect(stderr));
    let startError: string | null = null;
    child.on('error', (error) => {
      startError = error.message;
    });
    child.on('close', (code, signal) => {
      const out = Buffer.concat(stdout).toString('utf8');
      const err = Buffer.concat(stderr).toString('utf8');
      if (startError !== null) {
        resolve({ code: 127, stdout: out, stderr: `${err}could not run git in ${cwd}: ${startError}` });
      } else if (overflow) {
        resolve({ code: 128, stdout: out, stderr: `${err}git printed more than ${OUTPUT_LIMIT_BYTES} bytes and was stopped` });
      } else if (code === null) {
        resolve({ code: 128, stdout: out, stderr: `${err}git was killed by ${signal ?? 'a signal'}` });
      } else {
        resolve({ code, stdout: out, stderr: err });
      }
    });
    // A closed or broken stdin must not crash the process; git's exit code tells the story.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** Splits `-z` output (NUL-separated) into its non-empty entries. */
export function splitNul(output: string): string[] {
  return output.split('\0').filter((entry) => entry.length > 0);
}

/** A one-line description of a failed git call, for error messages. */
export function describeFailure(args: readonly string[], result: GitResult): string {
  const detail = (result.stderr.trim() || result.stdout.trim()).split('\n').slice(-6).join(' ');
  return `git ${args.join(' ')} failed (exit ${result.code}): ${detail}`;
}

/**
 * Whether a long-lived git process (and its pipes) keeps Node running: yes while a request to
 * it is in flight, no while it idles, so an idle helper never holds a finished program open.
 */
export function setKeepsProcessAlive(child: ChildProcessWithoutNullStreams, keep: boolean): void {
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    const handle = stream as unknown as { ref?: () => void; unref?: () => void };
    if (keep) handle.ref?.();
    else handle.unref?.();
  }
  if (keep) child.ref();
  else child.unref();
}
