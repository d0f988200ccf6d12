/**
 * Variables copied from the parent's environment when set there. Everything else is dropped,
 * so API keys, tokens and the harness's own settings never reach a command an agent runs.
 */
export const INHERITED_VARIABLES: readonly string[] = [
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TMPDIR',
  'TZ',
  'USER',
  'LOGNAME',
];

/**
 * Values every command gets: no colours or pagers to garble captured output, no prompts that
 * would wait on a closed stdin, and tools told they run unattended.
 */
export const FIXED_VARIABLES: Readonly<Record<string, string>> = {
  TERM: 'dumb',
  SHELL: '/bin/bash',
  CI: '1',
  NO_COLOR: '1',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
  DEBIAN_FRONTEND: 'noninteractive',
};

/** The PATH a command gets when the parent has none. */
export const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const FALLBACK_LANG = 'C.UTF-8';

/**
 * The environment for a command: the allowlisted part of `parent`, the fixed values, then
 * `extra` from the caller, which wins. Nothing from `parent` outside the allowlist is copied.
 */
export function buildCommandEnvironment(
  parent: Readonly<Record<string, string | undefined>>,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const environment: Record<string, string> = { PATH: FALLBACK_PATH, LANG: FALLBACK_LANG };
  for (const name of INHERITED_VARIABLES) {
    const value = parent[name];
    if (value !== undefined && value !== '') environment[name] = value;
  }
  Object.assign(environment, FIXED_VARIABLES, extra);
  return environment;
}
