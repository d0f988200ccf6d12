import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultPromptSet, fillPlaceholders, loadPromptSet, placeholdersIn, PROMPT_NAMES, type PromptSetResult } from './prompt-set.js';

let repo: string;

beforeEach(() => {
  repo = mkdtempSync(join(tmpdir(), 'colony-prompts-'));
});

afterEach(() => {
  rmSync(repo, { recursive: true, force: true });
});

function override(file: string, text: string): string {
  const dir = join(repo, '.colony', 'prompts');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, file), text);
  return join(dir, file);
}

function errorOf(result: PromptSetResult): string {
  if (result.ok) throw new Error('the prompt set loaded, but it should have been refused');
  return result.error;
}

describe('the prompt set', () => {
  it('names every file in the prompts folder, and nothing else', () => {
    const files = readdirSync(new URL('./', import.meta.url)).filter((file) => file.endsWith('.md'));
    expect([...PROMPT_NAMES].sort()).toEqual(files.map((file) => file.slice(0, -'.md'.length)).sort());
  });

  it('keeps in each of colony’s own prompts the placeholders the code fills', () => {
    const prompts = defaultPromptSet();
    expect(placeholdersIn(prompts.text('planner'))).toEqual(['ROLE', 'TEST_COMMAND', 'PUBLISH_LIMIT']);
    expect(placeholdersIn(prompts.text('worker'))).toEqual(['TEST_COMMAND']);
    expect(placeholdersIn(prompts.text('worker-task'))).toEqual(['BRIEF', 'GOAL', 'PATHS', 'STEPS']);
    expect(placeholdersIn(prompts.text('main-failing'))).toEqual(['COMMAND', 'COMMIT', 'FAILURES']);
    expect(placeholdersIn(prompts.text('budget-final-worker'))).toEqual(['WHAT']);
    expect(placeholdersIn(prompts.text('budget-final-planner'))).toEqual(['WHAT']);
    expect(placeholdersIn(prompts.text('budget-warning'))).toEqual(['FIGURES']);
    expect(placeholdersIn(prompts.text('files-in-flight'))).toEqual(['SECTIONS']);
    for (const name of ['root-planner-role', 'sub-planner-role', 'planner-nudge', 'worker-nudge'] as const) {
      expect(placeholdersIn(prompts.text(name))).toEqual([]);
    }
    // The sim reads this header as a real model would: it must stay in both last-call notices.
    expect(prompts.text('budget-final-worker')).toMatch(/^Budget used up: /);
    expect(prompts.text('budget-final-planner')).toMatch(/^Budget used up: /);
  });

  it('is colony’s own, trimmed, where the repository has no overrides', () => {
    const loaded = loadPromptSet(repo);
    if (!loaded.ok) throw new Error(loaded.error);
    expect(loaded.prompts.overridden).toEqual([]);
    const own = readFileSync(new URL('./worker.md', import.meta.url), 'utf8');
    expect(loaded.prompts.text('worker')).toBe(own.trim());
    for (const name of PROMPT_NAMES) expect(loaded.prompts.text(name)).toBe(defaultPromptSet().text(name));
  });

  it('takes a repository’s override in place of colony’s prompt and records its file and hash', () => {
    const text = 'You are a careful worker on this project.\n\n{{TEST_COMMAND}} Always run it twice.\n';
    const path = override('worker.md', text);
    override('budget-warning.md', 'Careful: {{FIGURES}}');
    const loaded = loadPromptSet(repo);
    if (!loaded.ok) throw new Error(loaded.error);
    expect(loaded.prompts.text('worker')).toBe(text.trim());
    expect(loaded.prompts.text('budget-warning')).toBe('Careful: {{FIGURES}}');
    expect(loaded.prompts.text('planner')).toBe(defaultPromptSet().text('planner'));
    expect(loaded.prompts.overridden).toEqual([
      { name: 'budget-warning', path: join(repo, '.colony', 'prompts', 'budget-warning.md'), sha256: sha256('Careful: {{FIGURES}}') },
      { name: 'worker', path, sha256: sha256(text) },
    ]);
  });

  it('refuses a file that is no prompt’s, naming it and the files allowed', () => {
    override('wroker.md', 'Work hard. {{TEST_COMMAND}}');
    override('notes.txt', 'my notes');
    const error = errorOf(loadPromptSet(repo));
    expect(error).toContain(`${join(repo, '.colony', 'prompts', 'wroker.md')}: no prompt of colony's is called that.`);
    expect(error).toContain(`${join(repo, '.colony', 'prompts', 'notes.txt')}: no prompt of colony's is called that.`);
    expect(error).toContain(`The files allowed here are ${PROMPT_NAMES.map((name) => `${name}.md`).join(', ')}.`);
  });

  it('passes over hidden files an editor or a desktop leaves in the folder', () => {
    override('.worker.md.swp', 'binary editor state');
    override('.DS_Store', 'folder notes');
    const path = override('worker.md', 'Work in small steps. {{TEST_COMMAND}}');
    const loaded = loadPromptSet(repo);
    expect(loaded.ok && loaded.prompts.overridden.map((entry) => entry.path)).toEqual([path]);
  });

  it('refuses an empty override and a folder where a prompt file belongs', () => {
    override('worker.md', ' \n\n');
    mkdirSync(join(repo, '.colony', 'prompts', 'planner.md'));
    const error = errorOf(loadPromptSet(repo));
    expect(error).toContain(`${join(repo, '.colony', 'prompts', 'worker.md')}: it is empty. Write the whole prompt in it, or delete it to use colony's own.`);
    expect(error).toContain(`${join(repo, '.colony', 'prompts', 'planner.md')}: it is a folder`);
  });

  it('refuses an override that leaves out a placeholder colony fills, or holds one it does not', () => {
    override('planner.md', 'You plan. {{TEST_COMMAND}}');
    override('budget-final-worker.md', 'Budget used up: {{WHAT}}. Hand off in {{MINUTES}} minutes.');
    override('sub-planner-role.md', 'You own {{SCOPE}}.');
    const error = errorOf(loadPromptSet(repo));
    expect(error).toContain(
      `${join(repo, '.colony', 'prompts', 'planner.md')}: it leaves out {{ROLE}} and {{PUBLISH_LIMIT}}, which colony fills in when it uses this prompt. This prompt must hold {{ROLE}}, {{TEST_COMMAND}} and {{PUBLISH_LIMIT}}, and no other {{...}}.`,
    );
    expect(error).toContain(
      `${join(repo, '.colony', 'prompts', 'budget-final-worker.md')}: it holds {{MINUTES}}, which colony does not fill. This prompt must hold {{WHAT}}, and no other {{...}}.`,
    );
    expect(error).toContain(`${join(repo, '.colony', 'prompts', 'sub-planner-role.md')}: it holds {{SCOPE}}, which colony does not fill. This prompt takes no placeholder.`);
  });

  it('refuses a prompts path that is a file', () => {
    mkdirSync(join(repo, '.colony'));
    writeFileSync(join(repo, '.colony', 'prompts'), 'not a folder');
    expect(errorOf(loadPromptSet(repo))).toContain(`${join(repo, '.colony', 'prompts')} is a file; it must be a folder of prompt files`);
  });
});

describe('filling placeholders', () => {
  it('fills every occurrence, literally, and leaves the ones it is not given', () => {
    expect(fillPlaceholders('{{A}} and {{A}}, {{ B }}; {{C}}', { A: 'x$&y', B: '$1' })).toBe('x$&y and x$&y, $1; {{C}}');
    expect(fillPlaceholders('{{constructor}}', {})).toBe('{{constructor}}');
  });
});

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
