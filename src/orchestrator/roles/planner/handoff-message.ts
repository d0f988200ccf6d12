import type { AcceptanceResult, Handoff } from '../../../events/handoff.js';
import { HANDOFF_OPENING, NOTHING_NEW_FAILING, USER_MESSAGE_HEADER } from '../../../protocol/message-openings.js';

/**
 * The texts a planner reads: a child's handoff as a message, a person's message, and the
 * earlier attempts appended to a retried task's brief. The format is described in
 * docs/architecture/planner.md; planners (the sim's included) read it as text.
 */

const LIST_SECTIONS: readonly [keyof Handoff, string][] = [
  ['notes', 'notes'],
  ['concerns', 'concerns'],
  ['deviations', 'deviations'],
  ['findings', 'findings'],
  ['feedback', 'feedback'],
  ['followUps', 'follow-ups'],
];

/**
 * colony's verdict on the task's acceptance commands, right under the status so it is read
 * with it: the headline, a line per command, and a failing command's output tail indented
 * below it (indented, so no output line reads as a field of the handoff).
 */
function acceptanceLines(handoff: Handoff): string[] {
  const verdict = handoff.acceptance ?? null;
  if (verdict === null) return [];
  if (verdict.skipped !== null || verdict.commit === null) return [`acceptance: not run: ${verdict.skipped ?? 'nothing was checked'}`];
  const at = verdict.commit.slice(0, 12);
  const headline = verdict.passed ? `passed at ${at}` : `${handoff.status === 'done' ? 'claimed done, ' : ''}checks failed at ${at}`;
  const lines = [`acceptance: ${headline}`];
  for (const result of verdict.results) {
    lines.push(`- \`${result.command.replace(/\n/g, ' ')}\`: ${resultWords(result)}`);
    if (result.passed) continue;
    const already = result.alreadyFailing ?? [];
    if (already.length > 0) lines.push(`  ${alreadyFailingWords(already.length, result.newFailures ?? [])}`);
    for (const line of result.outputTail.split('\n')) if (line.trim() !== '') lines.push(`    ${line}`);
  }
  return lines;
}

/**
 * What a failed check owes to main as it was before the worker's merge: failures colony's green
 * check already showed are not the task's; the planner retries only for the new ones.
 */
function alreadyFailingWords(already: number, fresh: readonly string[]): string {
  const before = `${already} of its failures already failed on main before this merge (not this task's; the green loop's fix-up owns ${already === 1 ? 'it' : 'them'})`;
  return fresh.length === 0 ? `${before}${NOTHING_NEW_FAILING}` : `${before}; new: ${fresh.slice(0, 5).join('; ')}${fresh.length > 5 ? ` and ${fresh.length - 5} more` : ''}.`;
}

function resultWords(result: AcceptanceResult): string {
  if (result.passed) return 'passed';
  if (result.timedOut) return 'failed: timed out';
  return result.exitCode === null ? 'failed: killed before it exited' : `failed with exit code ${result.exitCode}`;
}

function handoffLines(handoff: Handoff): string[] {
  const lines = [`status: ${handoff.status}`, ...acceptanceLines(handoff)];
  if (handoff.synthetic) lines.push('written by colony: the agent ended without a handoff');
  lines.push(`summary: ${handoff.summary}`);
  lines.push(`commits: ${handoff.commits.length === 0 ? 'none' : handoff.commits.map((commit) => commit.slice(0, 12)).join(', ')}`);
  if (handoff.evidence.trim() !== '') lines.push(`evidence: ${handoff.evidence.trim()}`);
  for (const [field, heading] of LIST_SECTIONS) {
    const items = handoff[field];
    if (!Array.isArray(items) || items.length === 0) continue;
    lines.push(`${heading}:`);
    for (const item of items) lines.push(`- ${item.replace(/\n/g, ' ')}`);
  }
  return lines;
}

/** A child's handoff as the message its planner receives. */
export function handoffMessage(taskId: string, title: string, handoff: Handoff): string {
  return [`${HANDOFF_OPENING} ${taskId} "${title}"`, ...handoffLines(handoff)].join('\n');
}

/** A person's message to a planner. */
export function personMessage(text: string): string {
  return `${USER_MESSAGE_HEADER}\n${text}`;
}

export interface EarlierAttempt {
  readonly taskId: string;
  readonly handoffs: readonly Handoff[];
}

/** The heading of the section colony appends to a retried task's brief. */
export const EARLIER_ATTEMPTS_HEADING = '## Earlier attempts';

/** The section colony appends to a retried task's brief: what happened in every earlier attempt. */
export function earlierAttemptsSection(attempts: readonly EarlierAttempt[]): string {
  const blocks = attempts.flatMap((attempt) =>
    attempt.handoffs.map((handoff) => [`### Task ${attempt.taskId}`, ...handoffLines(handoff)].join('\n')),
  );
  if (blocks.length === 0) return '';
  return [EARLIER_ATTEMPTS_HEADING, '', 'This task was tried before. What those attempts handed off:', '', blocks.join('\n\n')].join('\n');
}
