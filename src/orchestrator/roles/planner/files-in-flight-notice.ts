import { fillPlaceholders, listedNames, type PromptSet } from '../../prompts/prompt-set.js';
import type { FilesPicture, HotFile, TaskInFlight, WorkInFlight } from '../../in-flight/work-in-flight.js';

/**
 * Bounds that keep the notice to a few hundred tokens however busy the run: it is sent again
 * after the conversation with every request.
 */
const MAX_TASKS_SHOWN = 6;
const MAX_PATHS_SHOWN = 3;
const MAX_SHARED_SHOWN = 4;
const MAX_TASK_IDS_SHOWN = 4;
const MAX_HOT_SHOWN = 5;
const MAX_TITLE_CHARS = 60;

/**
 * What a planner is shown before a model call about the run's files, as a standing notice (the
 * latest replaces the one before): null when nothing is in flight, shared or hot. One per planner.
 */
export interface FilesInFlightNotice {
  current(): Promise<string | null>;
}

export function createFilesInFlightNotice(workInFlight: WorkInFlight, plannerTaskId: string, prompts: PromptSet): FilesInFlightNotice {
  const template = prompts.text('files-in-flight');
  return { current: async () => renderFilesInFlight(await workInFlight.picture(), plannerTaskId, template) };
}

/**
 * The notice for `picture` as the planner of `plannerTaskId` sees it, in the `files-in-flight`
 * prompt `template`; null when there is nothing to show.
 */
export function renderFilesInFlight(picture: FilesPicture, plannerTaskId: string, template: string): string | null {
  const sections = [tasksSection(picture, plannerTaskId), sharedSection(picture), hotSection(picture.hot)].filter(
    (section) => section.length > 0,
  );
  if (sections.length === 0) return null;
  return fillPlaceholders(template, { SECTIONS: sections.map((section) => section.join('\n')).join('\n') });
}

function tasksSection(picture: FilesPicture, plannerTaskId: string): string[] {
  const { inFlight } = picture;
  if (inFlight.length === 0) return [];
  const inShared = new Set(picture.shared.flatMap((shared) => shared.taskIds));
  const ranked = inFlight.map((task) => ({
    task,
    rank: [inShared.has(task.taskId) ? 0 : 1, task.parentTaskId === plannerTaskId ? 0 : 1, task.state === 'running' ? 0 : 1, -task.lastActivitySeq],
  }));
  ranked.sort((a, b) => compareRanks(a.rank, b.rank));
  const shown = ranked.slice(0, MAX_TASKS_SHOWN).map(({ task }) => task);
  const heading = shown.length < inFlight.length ? `In flight (${shown.length} of ${inFlight.length} worker tasks):` : `In flight (${inFlight.length} worker task${inFlight.length === 1 ? '' : 's'}):`;
  return [heading, ...shown.map((task) => taskLine(task, plannerTaskId))];
}

function taskLine(task: TaskInFlight, plannerTaskId: string): string {
  const state = task.parentTaskId === plannerTaskId ? `${task.state}, yours` : task.state;
  const declared = task.declared.length === 0 ? 'no paths declared' : `declared ${listedNames(task.declared, MAX_PATHS_SHOWN)}`;
  const changed = task.touched.length === 0 ? 'nothing changed yet' : `changed ${listedNames(task.touched, MAX_PATHS_SHOWN)}`;
  return `- ${task.taskId} "${clip(task.title)}" (${state}): ${declared}; ${changed}`;
}

function sharedSection(picture: FilesPicture): string[] {
  if (picture.shared.length === 0) return [];
  const lines = picture.shared.slice(0, MAX_SHARED_SHOWN).map((shared) => `- ${shared.path}: ${listedNames(shared.taskIds, MAX_TASK_IDS_SHOWN)}`);
  const more = picture.shared.length - MAX_SHARED_SHOWN;
  if (more > 0) lines.push(`- and ${more} more shared path${more === 1 ? '' : 's'}`);
  return ['Shared by tasks in flight:', ...lines];
}

function hotSection(hot: readonly HotFile[]): string[] {
  if (hot.length === 0) return [];
  return ['Hot files in recent merges:', ...hot.slice(0, MAX_HOT_SHOWN).map(hotLine)];
}

function hotLine(file: HotFile): string {
  const parts = [counted(file.landed, 'landing')];
  if (file.settled > 0) parts.push(`${counted(file.settled, 'append')} colony merged itself`);
  if (file.conflicted > 0) parts.push(counted(file.conflicted, 'conflict'));
  return `- ${file.path}: ${parts.join(', ')}`;
}

function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function clip(title: string): string {
  const line = title.replace(/\s+/g, ' ').trim();
  return line.length <= MAX_TITLE_CHARS ? line : `${line.slice(0, MAX_TITLE_CHARS - 1)}…`;
}

function compareRanks(a: readonly number[], b: readonly number[]): number {
  for (let index = 0; index < a.length; index += 1) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}
