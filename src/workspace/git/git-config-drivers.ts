import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * Programs a repository's own configuration can make git run on file contents: a `filter`
 * driver (`clean`, `smudge`, `process`) runs on `git add`, `status` and every checkout; a
 * `merge` driver runs in a rebase; a `diff` driver's `textconv` in a diff. A `.gitattributes`
 * line selects a driver by name, and only configuration defines what the name runs, so
 * colony's own git calls redefine every name the configuration mentions as doing nothing
 * (filters, textconv) or git's built-in text merge (merge drivers). Command-line settings win
 * over every configuration file, and git passes them on to the git processes it starts.
 *
 * The configuration is read here, in this process, before every git call, not by asking git:
 * an agent can change it between two calls (with `--sandbox=none`, or through its own git
 * commands), and a git process per call would double what a merge costs. The reading errs on
 * the side of finding too many names: a header anywhere in a file counts (in a comment or
 * a value too), and every `path` setting counts as an include, whatever its condition.
 */

/** What one git call needs: the settings to pass, or why colony refuses to run git at all. */
export type DriverOverrides = { readonly ok: true; readonly settings: readonly (readonly [string, string])[] } | { readonly ok: false; readonly error: string };

/** The kinds of driver and, for each, the settings that make a driver of that name harmless. */
const NEUTRAL_SETTINGS: Readonly<Record<'filter' | 'diff' | 'merge', readonly (readonly [string, string])[]>> = {
  // An empty command is no filter at all (git's convert.c skips it); `required` would then fail every add.
  filter: [
    ['clean', ''],
    ['smudge', ''],
    ['process', ''],
    ['required', 'false'],
  ],
  // `cat` converts nothing; caching a conversion would write notes refs. An external `command`
  // runs only for a patch with external diffs allowed, which colony never asks for (`--no-ext-diff`).
  diff: [
    ['textconv', 'cat'],
    ['cachetextconv', 'false'],
  ],
  // git's own three-way text merge, conflict markers and all, run as `git merge-file`.
  merge: [
    ['driver', 'git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B'],
    ['recursive', 'text'],
  ],
};

/** git itself stops following includes this deep. */
const MAX_INCLUDE_DEPTH = 10;

// `[section]`, `[section.sub]` (old style, lower-cased by git) or `[section "sub"]` (escapes allowed).
const SECTION_HEADER = /\[([A-Za-z0-9.-]+)(?:[ \t\r\v\f]+"((?:[^"\\\n]|\\[^\n])*)")?\]/g;
// A `path = …` setting, at the start of a line or right after a section header on the same line.
const PATH_SETTING = /(?:^|\])[ \t]*path[ \t]*=((?:[^\n\\]|\\[^]|\\$)*)/gim;

/**
 * The settings that make every filter, diff and merge driver named in the configuration git
 * reads for the git directory `gitDirs` (its common config, its `config.worktree`, and what
 * they include) harmless. Never throws; an include colony cannot follow is a refusal.
 */
export function driverOverrides(gitDirs: readonly string[]): DriverOverrides {
  const names = { filter: new Set<string>(), diff: new Set<string>(), merge: new Set<string>() };
  const seen = new Set<string>();
  const pending: { file: string; depth: number }[] = gitDirs.flatMap((gitDir) => configFilesOf(gitDir).map((file) => ({ file, depth: 0 })));
  for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
    if (seen.has(next.file) || next.depth > MAX_INCLUDE_DEPTH) continue;
    seen.add(next.file);
    const text = readIfFile(next.file);
    if (text === null) continue;
    collectDriverNames(text, names);
    for (const value of includePaths(text)) {
      const included = resolveIncludePath(value, next.file);
      if (included === null) {
        return {
          ok: false,
          error: `colony runs no git command in this repository: ${next.file} includes ${JSON.stringify(value)}, a path colony cannot resolve, so it cannot tell which programs that configuration would make git run. Give the include an absolute path, or one relative to ${dirname(next.file)}.`,
        };
      }
      pending.push({ file: included, depth: next.depth + 1 });
    }
  }
  const settings: [string, string][] = [];
  for (const kind of ['filter', 'diff', 'merge'] as const) {
    for (const name of [...names[kind]].sort()) {
      for (const [key, value] of NEUTRAL_SETTINGS[kind]) settings.push([`${kind}.${name}.${key}`, value]);
    }
  }
  return { ok: true, settings };
}

/** The configuration files git reads for `gitDir` besides the command line: the common `config` and the per-worktree one. */
export function configFilesOf(gitDir: string): string[] {
  const commonDir = readCommonDir(gitDir);
  return [...new Set([join(commonDir, 'config'), join(gitDir, 'config.worktree'), join(commonDir, 'config.worktree')])];
}

/** The common git directory of `gitDir`: what its `commondir` file names, or itself. */
function readCommonDir(gitDir: string): string {
  const text = readIfFile(join(gitDir, 'commondir'));
  const named = text?.replace(/\r?\n$/, '') ?? '';
  if (named === '') return gitDir;
  return isAbsolute(named) ? named : resolve(gitDir, named);
}

function readIfFile(path: string): string | null {
  try {
    if (!statSync(path).isFile()) return null;
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function collectDriverNames(text: string, names: Record<'filter' | 'diff' | 'merge', Set<string>>): void {
  for (const match of text.matchAll(SECTION_HEADER)) {
    const base = (match[1] ?? '').toLowerCase();
    const full = match[2] === undefined ? base : `${base}.${match[2].replace(/\\(.)/g, '$1')}`;
    const dot = full.indexOf('.');
    if (dot === -1) continue;
    const section = full.slice(0, dot);
    const name = full.slice(dot + 1);
    // git cannot take a name with a newline on its command line, and no attribute can select one.
    if (name === '' || name.includes('\n') || name.includes('\0')) continue;
    if (section === 'filter' || section === 'diff' || section === 'merge') names[section].add(name);
  }
}

function includePaths(text: string): string[] {
  const paths: string[] = [];
  for (const match of text.matchAll(PATH_SETTING)) {
    const value = parseValue(match[1] ?? '');
    if (value !== '') paths.push(value);
  }
  return paths;
}

/** A config value as git reads it: quotes removed, escapes applied, a comment and trailing blanks dropped. */
export function parseValue(raw: string): string {
  let value = '';
  let quoted = false;
  let pendingSpace = '';
  for (let index = 0; index < raw.length; index += 1) {
    const character = raw[index] ?? '';
    if (character === '\\') {
      const escaped = raw[index + 1] ?? '';
      index += 1;
      if (escaped === '\n') continue;
      value += pendingSpace + ({ n: '\n', t: '\t', b: '\b' }[escaped] ?? escaped);
      pendingSpace = '';
      continue;
    }
    if (character === '"') {
      quoted = !quoted;
      continue;
    }
    if (!quoted && (character === '#' || character === ';')) break;
    if (!quoted && (character === ' ' || character === '\t' || character === '\r')) {
      // git keeps inner blanks as spaces and drops leading and trailing ones.
      if (value !== '') pendingSpace += ' ';
      continue;
    }
    value += pendingSpace + character;
    pendingSpace = '';
  }
  return value;
}

/** Where git would look for an included file, or null for a form colony does not resolve (`~user/`, `%(prefix)/`). */
function resolveIncludePath(value: string, includingFile: string): string | null {
  if (value.startsWith('~/')) return join(homedir(), value.slice(2));
  if (value.startsWith('~') || value.startsWith('%(prefix)')) return null;
  return isAbsolute(value) ? value : resolve(dirname(includingFile), value);
}

/**
 * The git directory git would find from `cwd` when none is named: the first `.git` (a
 * directory, or a file naming one) in `cwd` or above, and `cwd` itself when it looks like a
 * git directory. Over-inclusive on purpose: every candidate's configuration is vetted.
 */
export function discoverGitDirs(cwd: string): string[] {
  const found: string[] = [];
  const start = resolve(cwd);
  if (readIfFile(join(start, 'HEAD')) !== null && readIfFile(join(start, 'config')) !== null) found.push(start);
  for (let directory = start; ; directory = dirname(directory)) {
    const dotGit = join(directory, '.git');
    const named = gitDirNamedBy(dotGit);
    if (named !== null) {
      found.push(named);
      break;
    }
    if (dirname(directory) === directory) break;
  }
  return found;
}

/** The git directory a `.git` entry stands for: itself when a directory, what it names when a `gitdir:` file. */
function gitDirNamedBy(dotGit: string): string | null {
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
  } catch {
    return null;
  }
  const text = readIfFile(dotGit);
  const match = text === null ? null : /^gitdir: (.+?)\r?$/m.exec(text);
  if (match?.[1] === undefined) return null;
  return isAbsolute(match[1]) ? match[1] : resolve(dirname(dotGit), match[1]);
}
