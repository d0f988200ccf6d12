import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

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
}

/** The identity on every commit colony makes, so no commit depends on the user's config. */
export const COLONY_IDENTITY = { name: 'colony', email: 'colony@localhost' } as const;

/**
 * Settings that let a repository's own config neither block nor slow colony's git calls:
 * hooks could fail or prompt, signing could ask for a passphrase, a pager or colors would
 * corrupt parsed output, and rebase conveniences would change what a rebase does.
 */
const HARDENING_CONFIG: readonly string[] = [
  'core.hooksPath=/dev/null',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
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
 * config switched off, no editor or terminal prompt, stable English messages and colony's
 * identity.
 */
function gitEnvironment(extra: Readonly<Record<string, string>> | undefined): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {};
  for (const name of INHERITED_VARIABLES) {
    const value = process.env[name];
    if (value !== undefined) environment[name] = value;
  }
  Object.assign(environment, {
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
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
  if (extra !== undefined) Object.assign(environment, extra);
  return environment;
}

/**
 * Starts `git <args>` in `cwd` without a shell, hardened and with colony's environment, its
 * three standard streams piped. For the long-lived git processes colony talks to; one-shot
 * commands go through `runGit`.
 */
export function spawnGit(cwd: string, args: readonly string[], env?: Readonly<Record<string, string>>): ChildProcessWithoutNullStreams {
  const fullArgs = [...HARDENING_CONFIG.flatMap((setting) => ['-c', setting]), ...args];
  // Its own process group: a Ctrl-C in the terminal asks colony to stop after the current
  // step, and must not kill a git command half-way through updating files or refs.
  return spawn('git', fullArgs, { cwd, env: gitEnvironment(env), detached: true, stdio: 'pipe' });
}

/**
 * Runs `git <args>` in `cwd` without a shell. Never throws: a non-zero exit comes back as
 * `code`; a git that could not be started comes back as code 127, and one killed by a signal
 * as code 128, with the reason in `stderr`.
 */
export function runGit(cwd: string, args: readonly string[], options: RunGitOptions = {}): Promise<GitResult> {
  return collectOutput(spawnGit(cwd, args, options.env), cwd, options.input);
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, "'\\''")}'`;
}

/**
 * Runs several git commands one after another in `cwd`, stopping at the first that fails, as
 * one child of this process: `/bin/sh` starts the git processes. Starting a process from a large
 * Node process costs far more than from a shell, and merges run these pairs constantly. The
 * result is the first failure's (or the last command's) exit code, with everything printed.
 */
export function runGitSequence(cwd: string, commands: readonly (readonly string[])[]): Promise<GitResult> {
  const hardening = HARDENING_CONFIG.flatMap((setting) => ['-c', setting]);
  const script = commands.map((args) => ['git', ...hardening, ...args].map(shellQuote).join(' ')).join(' && ');
  const child = spawn('/bin/sh', ['-c', script], { cwd, env: gitEnvironment(undefined), detached: true, stdio: 'pipe' });
  return collectOutput(child, cwd, undefined);
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
