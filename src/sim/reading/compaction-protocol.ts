import type { Message } from '../../model/messages.js';
import { COMPACTION_REQUEST_OPENING, SUMMARY_OPENING } from '../../protocol/message-openings.js';

/**
 * How colony compacts a conversation that nears its context window, in the words both sides
 * use (docs/architecture/sim.md, "Compaction"):
 *
 * - The compaction request: `[system, first user message, (the latest summary), ...the older
 *   turns to be replaced, { user: <prompt> }]` with no tools offered; the prompt begins with
 *   `COMPACTION_REQUEST_OPENING`. The model answers with text only: the summary.
 * - The compacted conversation: `[system, first user message, { user: SUMMARY_OPENING ...
 *   the summary verbatim }, ...the recent turns as they were]`.
 * - Before compacting, old tool results may be shrunk to their first and last
 *   `SHRUNK_KEEP_CHARACTERS` characters with an omission line between (`shrinkToolOutput`).
 */

/** Characters kept at each end of a shrunk tool output. */
export const SHRUNK_KEEP_CHARACTERS = 200;

/** The omission line colony puts in the middle of a shrunk tool output. */
const OMISSION_LINE = /\[\.\.\. (\d+) characters omitted by colony to save context[^\]\n]*\]/;

/**
 * A tool output as colony shrinks it to save context: its first and last 200 characters with
 * a line between that says how much was left out. Shorter outputs are kept whole.
 */
export function shrinkToolOutput(content: string, keep = SHRUNK_KEEP_CHARACTERS): string {
  if (content.length <= keep * 2) return content;
  const omitted = content.length - keep * 2;
  const line = `[... ${omitted} characters omitted by colony to save context; the full output is in the run's log ...]`;
  return `${content.slice(0, keep)}\n${line}\n${content.slice(-keep)}`;
}

/** Whether a tool output was shrunk by colony: what it shows is not the whole of it. */
export function isShrunkOutput(content: string): boolean {
  return OMISSION_LINE.test(content);
}

/**
 * The end of an output that colony may have shrunk: after the omission line, without the line
 * the cut went through; the whole output when it was not shrunk.
 */
export function unshrunkEnd(content: string): string {
  const match = OMISSION_LINE.exec(content);
  if (match === null) return content;
  const after = content.slice(match.index + match[0].length).replace(/^\n/, '');
  const newline = after.indexOf('\n');
  return newline === -1 ? '' : after.slice(newline + 1);
}

/** Whether the conversation ends with colony's request for a summary. */
export function isCompactionRequest(messages: readonly Message[]): boolean {
  const last = messages.at(-1);
  return last?.role === 'user' && last.content.startsWith(COMPACTION_REQUEST_OPENING);
}

/** Whether a message is a summary that stands in for earlier turns. */
export function isSummaryMessage(message: Message): boolean {
  return message.role === 'user' && message.content.startsWith(SUMMARY_OPENING);
}
