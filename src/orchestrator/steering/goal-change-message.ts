import { readFileSync } from 'node:fs';
import type { LineDiff } from './goal-diff.js';

const TEMPLATE = readFileSync(new URL('./goal-changed.md', import.meta.url), 'utf8').trim();

/**
 * Bounds on what the root planner is sent for one edit: the message becomes part of its
 * conversation for good, so a rewritten goal must not cost a whole context. The goal itself is
 * sent whole up to `MAX_GOAL_CHARS` (most goals are far smaller); past that, the message names
 * the file for the rest.
 */
const MAX_DIFF_LINES = 80;
const MAX_LINE_CHARS = 300;
const MAX_GOAL_CHARS = 32_000;

/** What the root planner is told when its goal file changed: the counts, the changed lines, and the whole new goal. */
export function goalChangedMessage(path: string, diff: LineDiff, goal: string): string {
  const counts = `${diff.added.length} line(s) added, ${diff.removed.length} removed`;
  const sections = [linesSection('Removed lines', '-', diff.removed), linesSection('Added lines', '+', diff.added)].filter((section) => section !== '');
  // One pass, with function replacements: a goal's own `$&` or `{{GOAL}}` is text, not a pattern.
  const values: Record<string, string> = { PATH: path, COUNTS: counts, DIFF: sections.join('\n'), GOAL: goalSection(path, goal) };
  return TEMPLATE.replace(/\{\{(PATH|COUNTS|DIFF|GOAL)\}\}/g, (_match, name: string) => values[name] ?? '');
}

function linesSection(heading: string, mark: string, lines: readonly string[]): string {
  if (lines.length === 0) return '';
  const shown = lines.slice(0, MAX_DIFF_LINES).map((line) => `${mark} ${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line}`);
  const rest = lines.length > MAX_DIFF_LINES ? [`… and ${lines.length - MAX_DIFF_LINES} more`] : [];
  return [`${heading} (${lines.length}):`, ...shown, ...rest].join('\n');
}

function goalSection(path: string, goal: string): string {
  const cut = goal.length > MAX_GOAL_CHARS;
  const text = cut ? goal.slice(0, MAX_GOAL_CHARS) : goal;
  const end = cut
    ? `----- the goal goes on for ${goal.length - MAX_GOAL_CHARS} more characters, in ${path} -----`
    : '----- end of the goal -----';
  return [`----- the goal, as it is now${cut ? ` (its first ${MAX_GOAL_CHARS} characters)` : ''} -----`, text.replace(/\n+$/, ''), end].join('\n');
}
