import { GREEN_FAILURES_HEADING } from '../../protocol/message-openings.js';

/**
 * How colony tells a planner that main's check fails, by its first words and its headings:
 * a fix-up message from the green loop (a snapshot of main failed and was bisected to a
 * commit of one of the planner's tasks), and the error a root planner's `finish` with status
 * done gets back when the release snapshot fails. The sim reads them as text, as a real model
 * would (docs/architecture/sim.md, "The green branch").
 */

/** The failure lines of a fix-up message or a refused finish, as written under GREEN_FAILURES_HEADING; empty when there is no such section. */
export function greenFailureLines(text: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.trim() === GREEN_FAILURES_HEADING);
  if (start === -1) return [];
  const section: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    section.push(line.replace(/^- /, ''));
  }
  return section;
}
