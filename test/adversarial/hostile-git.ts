import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Traps an agent could plant in a repository to make colony's own git calls run its code:
 * hooks, configured programs and drivers, each a script that leaves a marker file named after
 * the trap when it runs. A test plants them, drives colony's real code paths, and asserts no
 * marker appeared; a control run of plain git shows the same traps are live.
 */
export interface MarkerTrap {
  /** Where markers appear. */
  readonly markers: string;
  /**
   * A program (one path, no arguments: git runs some settings, such as gpg.program, without a
   * shell) that leaves the marker `name`; a filter's also passes its input through.
   */
  command(name: string): string;
  /** The names of the markers left so far, sorted. */
  fired(): Promise<string[]>;
}

export async function createMarkerTrap(base: string): Promise<MarkerTrap> {
  const markers = join(base, 'markers');
  await mkdir(markers, { recursive: true });
  const programs = join(base, 'trap-programs');
  await mkdir(programs, { recursive: true });
  return {
    markers,
    command: (name) => {
      const program = join(programs, name);
      // Only a filter reads its input: an ssh command or a credential helper would wait for ever on theirs.
      const passThrough = name.startsWith('filter-') ? 'cat 2>/dev/null\n' : '';
      writeFileSync(program, `#!/bin/sh\ntouch "${markers}/${name}"\n${passThrough}exit 0\n`);
      chmodSync(program, 0o755);
      return program;
    },
    fired: async () => (await readdir(markers)).sort(),
  };
}

/** Hooks git runs around commits, checkouts, rebases and ref updates. */
export const HOOK_NAMES = [
  'pre-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'post-checkout',
  'post-merge',
  'pre-rebase',
  'post-rewrite',
  'reference-transaction',
  'post-index-change',
  'pre-auto-gc',
] as const;

/** Writes every hook into `hooksDir`, each leaving the marker `<prefix>-<hook>`. */
export async function plantHooks(trap: MarkerTrap, hooksDir: string, prefix: string): Promise<void> {
  await mkdir(hooksDir, { recursive: true });
  for (const hook of HOOK_NAMES) {
    const path = join(hooksDir, hook);
    await writeFile(path, `#!/bin/sh\n${trap.command(`${prefix}-${hook}`)} </dev/null >/dev/null\nexit 0\n`);
    await chmod(path, 0o755);
  }
}

/**
 * Configuration that names a program git would run: every entry's value is a trap command
 * whose marker is the key. `includedFile` is included and defines one more filter driver.
 */
export function hostileSettings(trap: MarkerTrap, includedFile: string): [string, string][] {
  const programs: [string, string][] = [
    ['core.fsmonitor', 'fsmonitor'],
    ['core.sshCommand', 'ssh-command'],
    ['core.askPass', 'askpass'],
    ['credential.helper', 'credential-helper'],
    ['core.editor', 'editor'],
    ['sequence.editor', 'sequence-editor'],
    ['gpg.program', 'gpg-program'],
    ['diff.external', 'diff-external'],
    ['core.pager', 'pager'],
    ['filter.evil.clean', 'filter-clean'],
    ['filter.evil.smudge', 'filter-smudge'],
    ['filter.proc.process', 'filter-process'],
    ['diff.evil.textconv', 'diff-textconv'],
    ['diff.evil.command', 'diff-command'],
    ['merge.evil.driver', 'merge-driver'],
  ];
  return [
    ...programs.map(([key, marker]): [string, string] => [key, trap.command(marker)]),
    ['filter.evil.required', 'true'],
    ['commit.gpgSign', 'true'],
    ['log.showSignature', 'true'],
    ['include.path', includedFile],
  ];
}

/** The attributes that select the drivers above for every file. */
export const HOSTILE_ATTRIBUTES = '* filter=evil diff=evil merge=evil\n*.proc filter=proc\n*.inc filter=inc\n';

/** The included file's content: a filter driver colony only learns of by following the include. */
export function includedConfig(trap: MarkerTrap): string {
  return `[filter "inc"]\n\tclean = ${trap.command('filter-included')}\n\tsmudge = ${trap.command('filter-included')}\n`;
}

/**
 * Plain git, run as an agent (or a person) would in `cwd`: no colony hardening, only the
 * machine's global and system config switched off so the test does not depend on them.
 */
export function plainGit(args: readonly string[], cwd: string, input?: string): { code: number; output: string } {
  try {
    const output = execFileSync('git', args, {
      cwd,
      input: input ?? '',
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 20_000,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_AUTHOR_NAME: 'agent',
        GIT_AUTHOR_EMAIL: 'agent@localhost',
        GIT_COMMITTER_NAME: 'agent',
        GIT_COMMITTER_EMAIL: 'agent@localhost',
      },
    });
    return { code: 0, output };
  } catch (error) {
    const failure = error as { status?: number; stdout?: string; stderr?: string };
    return { code: failure.status ?? 1, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` };
  }
}

/** Writes `settings` into the config file `file` with plain git. */
export function writeConfig(file: string, settings: readonly (readonly [string, string])[], cwd: string): void {
  for (const [key, value] of settings) {
    const result = plainGit(['config', '--file', file, '--add', key, value], cwd);
    if (result.code !== 0) throw new Error(`git config ${key} failed: ${result.output}`);
  }
}
