/**
 * Every prompt in `orchestrator/prompts/`, by file name without `.md`. The one list of them: a
 * new prompt file needs its name here (a test checks the list against the folder), and
 * nothing else to be overridable.
 */
export const PROMPT_NAMES = [
  'budget-final-planner',
  'budget-final-worker',
  'budget-warning',
  'compaction',
  'evidence-reminder',
  'files-in-flight',
  'green-fixup',
  'main-failing',
  'others-tests',
  'planner',
  'planner-nudge',
  'reflect-reminder',
  'release-refused',
  'release-unchecked',
  'root-planner-role',
  'scratchpad-reminder',
  'steps-warning',
  'stray-notes',
  'sub-planner-role',
  'unlanded-done',
  'worker',
  'worker-nudge',
  'worker-task',
] as const;

export type PromptName = (typeof PROMPT_NAMES)[number];

export function isPromptName(name: string): name is PromptName {
  return (PROMPT_NAMES as readonly string[]).includes(name);
}

/** Where, inside the repository colony runs on, a file replaces one of colony's prompts: `<dir>/<name>.md`. */
export const PROMPT_OVERRIDES_DIR = '.colony/prompts';
