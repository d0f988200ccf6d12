/**
 * orchestrator/prompts: every text colony sends a model as a role's instructions, a reminder or
 * a notice, one `.md` file each in this folder (and nothing else here is `.md`), and the prompt
 * set that loads them, with a repository's overrides in `.colony/prompts/<name>.md`.
 */
import { readFileSync } from 'node:fs';
import { PROMPT_NAMES, type PromptName } from './prompt-names.js';
import { readPromptOverrides } from './prompt-overrides.js';

export { PROMPT_NAMES, PROMPT_OVERRIDES_DIR, type PromptName } from './prompt-names.js';
export { fillPlaceholders, listedNames, placeholdersIn } from './prompt-placeholders.js';

/** One prompt the repository replaced, and the file that did. */
export interface PromptOverride {
  readonly name: PromptName;
  /** The override's absolute path. */
  readonly path: string;
  /** The sha256 of the file's bytes, in hex: which version of it the run used. */
  readonly sha256: string;
}

/**
 * The prompts one run uses, read once when it starts. `text` is the prompt, trimmed, with its
 * `{{PLACEHOLDERS}}` still in it for the code that uses it to fill (see `fillPlaceholders`).
 */
export interface PromptSet {
  text(name: PromptName): string;
  /** The prompts the repository replaced, in the order of `PROMPT_NAMES`; empty when it replaced none. */
  readonly overridden: readonly PromptOverride[];
}

export type PromptSetResult = { readonly ok: true; readonly prompts: PromptSet } | { readonly ok: false; readonly error: string };

/**
 * colony's own prompts, with the overrides in `<repoRoot>/.colony/prompts/` (read from the
 * working tree) in their place. Refuses, naming the file, what is wrong and what is allowed,
 * a file there that is no prompt's, an empty one, and one that leaves out or adds a
 * placeholder: colony fills exactly the placeholders its own prompt has.
 */
export function loadPromptSet(repoRoot: string): PromptSetResult {
  const defaults = readDefaults();
  const read = readPromptOverrides(repoRoot, defaults);
  if (!read.ok) return read;
  const texts = new Map(defaults);
  for (const override of read.overrides) texts.set(override.name, override.text);
  const overridden = read.overrides.map(({ name, path, sha256 }) => ({ name, path, sha256 }));
  return { ok: true, prompts: promptSetOf(texts, overridden) };
}

/** colony's own prompts and nothing else: for tests, and for code that runs without a repository. */
export function defaultPromptSet(): PromptSet {
  return promptSetOf(readDefaults(), []);
}

function readDefaults(): Map<PromptName, string> {
  return new Map(PROMPT_NAMES.map((name) => [name, readFileSync(new URL(`./${name}.md`, import.meta.url), 'utf8').trim()]));
}

function promptSetOf(texts: ReadonlyMap<PromptName, string>, overridden: readonly PromptOverride[]): PromptSet {
  return {
    text(name) {
      const text = texts.get(name);
      // Every name is read when the set is made, so a miss is a name outside the type.
      if (text === undefined) throw new Error(`no prompt is called ${String(name)}`);
      return text;
    },
    overridden,
  };
}
