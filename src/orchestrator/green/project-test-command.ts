import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** How a project's tests are run, as read from its files, and which file said so. */
export interface ProjectTestCommand {
  readonly command: string;
  /** Where colony found it, for the agent: `the test script in package.json`. */
  readonly source: string;
}

/** What `npm init` writes into a new package.json: a test script that only fails. */
const NPM_INIT_TEST_SCRIPT = 'no test specified';

const MAKEFILES = ['GNUmakefile', 'makefile', 'Makefile'];

/**
 * The command that runs the tests of the project in `dir`, from the first of these that the
 * directory has: a `test` script in package.json (`npm test`), a `test` target in a Makefile
 * (`make test`), pyproject.toml or pytest.ini (`pytest`), Cargo.toml (`cargo test`), go.mod
 * (`go test ./...`). Null when none is there, or the files cannot be read.
 */
export function detectProjectTestCommand(dir: string): ProjectTestCommand | null {
  return detectTestCommandIn({ text: (name) => readText(join(dir, name)), isFile: (name) => isFile(join(dir, name)) });
}

/** The files of a project's top folder, wherever they are (a directory, a commit): text, or null when missing. */
export interface ProjectFiles {
  text(name: string): string | null;
  isFile(name: string): boolean;
}

/** As `detectProjectTestCommand`, from the project's top-level files however they are read. */
export function detectTestCommandIn(files: ProjectFiles): ProjectTestCommand | null {
  if (hasNpmTestScript(files.text('package.json'))) return { command: 'npm test', source: 'the test script in package.json' };
  const makefile = MAKEFILES.find((name) => hasTestTarget(files.text(name)));
  if (makefile !== undefined) return { command: 'make test', source: `the test target in ${makefile}` };
  const python = ['pyproject.toml', 'pytest.ini'].find((name) => files.isFile(name));
  if (python !== undefined) return { command: 'pytest', source: python };
  if (files.isFile('Cargo.toml')) return { command: 'cargo test', source: 'Cargo.toml' };
  if (files.isFile('go.mod')) return { command: 'go test ./...', source: 'go.mod' };
  return null;
}

/**
 * The sentence that fills `{{TEST_COMMAND}}` in the role prompts: the command and where it
 * came from, or, when colony found none, where to look instead.
 */
export function testCommandSentence(found: ProjectTestCommand | null): string {
  if (found !== null) return `Run this project's tests with \`${found.command}\` (${found.source}).`;
  return (
    'colony found no test command in this repository (no test script in package.json, no test target in a Makefile, ' +
    'no pyproject.toml, pytest.ini, Cargo.toml or go.mod): read its README to find how its tests are run.'
  );
}

function hasNpmTestScript(text: string | null): boolean {
  if (text === null) return false;
  try {
    const manifest = JSON.parse(text) as { scripts?: Record<string, unknown> };
    const script = manifest.scripts?.test;
    return typeof script === 'string' && script.trim() !== '' && !script.includes(NPM_INIT_TEST_SCRIPT);
  } catch {
    return false;
  }
}

/** A rule line (not a recipe line, not a variable) whose targets include `test`. */
function hasTestTarget(text: string | null): boolean {
  if (text === null) return false;
  return text.split('\n').some((line) => {
    const rule = /^([^\t#:=][^#:=]*)::?(?!=)/.exec(line);
    return rule !== null && (rule[1] ?? '').trim().split(/\s+/).includes('test');
  });
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function readText(path: string): string | null {
  if (!existsSync(path)) return null;
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
