import { readFileSync } from 'node:fs';

const TEMPLATE = readFileSync(new URL('./create-task-overlap.md', import.meta.url), 'utf8').trim();

/** Tasks named one by one; the rest are counted, so a planner that publishes into a busy run reads a short result. */
const MAX_TASKS_SHOWN = 6;
/** Paths named per task and kind; the rest are counted. */
const MAX_PATHS_SHOWN = 4;

/** What `create_task` adds to its result when the new task's paths meet tasks in flight. */
export function overlapText(overlaps: readonly TaskOverlap[]): string {
  const lines = overlaps.slice(0, MAX_TASKS_SHOWN).map(overlapLine);
  const more = overlaps.length - MAX_TASKS_SHOWN;
  if (more > 0) lines.push(`- and ${more} more task${more === 1 ? '' : 's'} in flight`);
  return TEMPLATE.replace('{{OVERLAPS}}', lines.join('\n'));
}

function overlapLine(overlap: TaskOverlap): string {
  const where: string[] = [];
  if (overlap.kind === 'planner') where.push(`delegated scope ${listed(overlap.declared)}`);
  else if (overlap.declared.length > 0) where.push(`declared ${listed(overlap.declared)}`);
  if (overlap.touched.length > 0) where.push(`changed ${listed(overlap.touched)}`);
  return `- task ${overlap.taskId} "${overlap.title}" (${overlap.state}): ${where.join('; ')}`;
}

function listed(paths: readonly string[]): string {
  const shown = paths.slice(0, MAX_PATHS_SHOWN).join(', ');
  const more = paths.length - MAX_PATHS_SHOWN;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

/** A task still in flight whose paths meet those a new task declared. */
export interface TaskOverlap {
  readonly taskId: string;
  readonly title: string;
  /** A planner task meets through the scope it was delegated. */
  readonly kind: 'worker' | 'planner';
  readonly state: 'open' | 'running';
  /** Its declared paths (its scope, for a planner task) that meet the new task's: the same, a folder over one, or under one. */
  readonly declared: readonly string[];
  /** The files its workers changed so far that meet the new task's paths. */
  readonly touched: readonly string[];
}
