import type { Scenario } from '../scenario/scenario.js';
import { seededRoll } from '../seeded-roll.js';
import type { SimOptions } from '../sim-options.js';

/**
 * Real models' habits the sim worker can have, each rolled per task (keyed by the task's text),
 * so a worker has the same habits on every turn and after a compaction. Each is one colony's
 * protocol catches; the worker then does what colony's answer says.
 */

/** Where a worker with the `notes` habit writes its summary: what models most often call it. */
export const NOTES_FILE = 'TASK_SUMMARY.md';

/** Whether this task's worker hands off `done` before merging (the `unmerged` habit). */
export function handsOffUnmerged(options: SimOptions, taskText: string): boolean {
  return seededRoll(options.seed, taskText, 0, 'unmerged') < options.unmerged;
}

/** Whether this task's worker writes a summary of its work into the repository before it merges (the `notes` habit). */
export function writesNotes(options: SimOptions, taskText: string): boolean {
  return seededRoll(options.seed, taskText, 0, 'notes') < options.notes;
}

/** The summary a worker with the `notes` habit writes: a few lines on what it did. */
export function notesContent(scenario: Scenario): string {
  const built = scenario.modules.map((module) => `- \`${module.path}\`: ${module.exports.map((fn) => fn.name).join(', ')}, with its tests`);
  return ['# Task summary', '', 'What I did:', '', ...built, `- re-exported from \`${scenario.project.index}\``, '', `The tests pass: \`${scenario.project.test}\`.`, ''].join('\n');
}

/** The command that puts a file back as the workspace's last commit has it, as the refusal says to. */
export function restoreCommandFor(path: string): string {
  return `git show HEAD:${path} > ${path}`;
}

/** The file a restore command (`restoreCommandFor`) writes, or null for any other command. */
export function restoredPathOf(command: string): string | null {
  const match = /^git show HEAD:(\S+) > (\S+)$/.exec(command);
  return match !== null && match[1] === match[2] ? (match[1] ?? null) : null;
}
