import type { Message } from '../../model/messages.js';
import { GREEN_FAILURES_HEADING, MAIN_FAILING_OPENING } from '../../protocol/message-openings.js';

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

/**
 * The failures colony's standing notice to a worker names as failing on main before its work
 * (`Main is failing already:`, then one `- <line>` each), or null when no message carries the
 * notice: main passed at its last check. Colony's own `- and N more` and a check that named no
 * failure are not failure lines.
 */
export function mainFailingLines(messages: readonly Message[]): string[] | null {
  const notice = messages.findLast((message) => message.role === 'user' && message.content.includes(MAIN_FAILING_OPENING));
  if (notice === undefined || notice.role !== 'user') return null;
  const lines = notice.content.slice(notice.content.indexOf(MAIN_FAILING_OPENING)).split('\n').slice(1);
  const listed: string[] = [];
  for (const line of lines) {
    if (!line.startsWith('- ')) break;
    listed.push(line.slice(2));
  }
  return listed.filter((line) => !/^and \d+ more$/.test(line) && !line.startsWith('('));
}
