import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isPromptName, PROMPT_NAMES, PROMPT_OVERRIDES_DIR, type PromptName } from './prompt-names.js';
import { placeholdersIn } from './prompt-placeholders.js';
import { errorMessage } from '../../errors/error-message.js';

/** One override as read: its prompt, its file, the file's sha256 and its text, trimmed. */
export interface ReadOverride {
  readonly name: PromptName;
  readonly path: string;
  readonly sha256: string;
  readonly text: string;
}

export type ReadOverridesResult = { readonly ok: true; readonly overrides: readonly ReadOverride[] } | { readonly ok: false; readonly error: string };

/**
 * The overrides in `<repoRoot>/.colony/prompts/`, checked against colony's own prompts
 * (`defaults`): each file must be named after a prompt, hold some text, and hold exactly the
 * placeholders that prompt has, since those are what colony fills and nothing else is. Every
 * problem is reported at once, so one look fixes them all. No folder, no overrides.
 */
export function readPromptOverrides(repoRoot: string, defaults: ReadonlyMap<PromptName, string>): ReadOverridesResult {
  const dir = join(repoRoot, PROMPT_OVERRIDES_DIR);
  if (!existsSync(dir)) return { ok: true, overrides: [] };
  let entries: string[];
  try {
    if (!statSync(dir).isDirectory()) return refuse(dir, [`${dir} is a file; it must be a folder of prompt files (${allowedFiles()}), or be removed.`]);
    entries = readdirSync(dir).sort();
  } catch (error) {
    return refuse(dir, [`${dir} cannot be read: ${reasonOf(error)}`]);
  }
  const problems: string[] = [];
  const overrides: ReadOverride[] = [];
  for (const entry of entries) {
    // Editors' swap files and a desktop's folder notes are not prompts anybody meant to give.
    if (entry.startsWith('.')) continue;
    const path = join(dir, entry);
    const name = entry.endsWith('.md') ? entry.slice(0, -'.md'.length) : entry;
    if (!isPromptName(name) || !entry.endsWith('.md')) {
      problems.push(`${path}: no prompt of colony's is called that. The files allowed here are ${allowedFiles()}.`);
      continue;
    }
    const read = readOverride(path);
    if (typeof read === 'string') {
      problems.push(`${path}: ${read}`);
      continue;
    }
    const problem = placeholderProblem(read.text, defaults.get(name) ?? '');
    if (problem !== null) {
      problems.push(`${path}: ${problem}`);
      continue;
    }
    overrides.push({ name, path, sha256: read.sha256, text: read.text });
  }
  if (problems.length > 0) return refuse(dir, problems);
  overrides.sort((a, b) => PROMPT_NAMES.indexOf(a.name) - PROMPT_NAMES.indexOf(b.name));
  return { ok: true, overrides };
}

/** The file's trimmed text and the sha256 of its bytes, or what keeps it from being a prompt. */
function readOverride(path: string): { readonly text: string; readonly sha256: string } | string {
  let bytes: Buffer;
  try {
    if (statSync(path).isDirectory()) return 'it is a folder; only prompt files belong here.';
    bytes = readFileSync(path);
  } catch (error) {
    return `it cannot be read: ${reasonOf(error)}`;
  }
  const text = bytes.toString('utf8').trim();
  if (text === '') return "it is empty. Write the whole prompt in it, or delete it to use colony's own.";
  return { text, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** What is wrong with the override's placeholders against its prompt's, or null when they match. */
function placeholderProblem(text: string, original: string): string | null {
  const required = placeholdersIn(original);
  const present = placeholdersIn(text);
  const missing = required.filter((name) => !present.includes(name));
  const unknown = present.filter((name) => !required.includes(name));
  if (missing.length === 0 && unknown.length === 0) return null;
  const said = [
    ...(missing.length === 0 ? [] : [`it leaves out ${listed(missing)}, which colony fills in when it uses this prompt`]),
    ...(unknown.length === 0 ? [] : [`it holds ${listed(unknown)}, which colony does not fill`]),
  ];
  const rule = required.length === 0 ? 'This prompt takes no placeholder.' : `This prompt must hold ${listed(required)}, and no other {{...}}.`;
  return `${said.join('; ')}. ${rule}`;
}

function refuse(dir: string, problems: readonly string[]): { readonly ok: false; readonly error: string } {
  const lines = [`colony cannot use the prompt overrides in ${dir}:`, ...problems.map((problem) => `- ${problem}`)];
  lines.push("Fix or delete these files: colony's own prompts are in src/orchestrator/prompts/ of colony (docs/architecture/orchestrator.md, \"Prompts\").");
  return { ok: false, error: lines.join('\n') };
}

function allowedFiles(): string {
  return PROMPT_NAMES.map((name) => `${name}.md`).join(', ');
}

function listed(names: readonly string[]): string {
  const marked = names.map((name) => `{{${name}}}`);
  return marked.length <= 1 ? (marked[0] ?? '') : `${marked.slice(0, -1).join(', ')} and ${marked.at(-1) ?? ''}`;
}

function reasonOf(error: unknown): string {
  return errorMessage(error);
}
