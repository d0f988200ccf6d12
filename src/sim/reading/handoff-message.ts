/**
 * Reading a child's handoff as it arrives in a planner's conversation (the format is in
 * docs/architecture/planner.md): a header line `Handoff from task <id> "<title>"`, then
 * `key: value` lines and list sections of `- item` lines.
 */
import { HANDOFF_OPENING, NOTHING_NEW_FAILING } from '../../protocol/message-openings.js';

export type HandoffStatus = 'done' | 'partial' | 'blocked' | 'failed';

export interface HandoffMessage {
  readonly taskId: string;
  readonly title: string;
  readonly status: HandoffStatus;
  /** True when colony wrote it for an agent that ended without a handoff. */
  readonly synthetic: boolean;
  readonly summary: string;
  readonly notes: readonly string[];
  readonly concerns: readonly string[];
  /** colony's verdict on the task's acceptance checks, when the task had any. */
  readonly acceptance: AcceptanceReading | null;
}

/** The `acceptance:` line and what follows it: how the checks on main went. */
export interface AcceptanceReading {
  readonly verdict: 'passed' | 'failed' | 'not-run';
  /** The commit checked (as shortened in the message), or null when nothing ran. */
  readonly commit: string | null;
  /** The headline and the lines below it (each command, a failing one's output tail). */
  readonly text: string;
  /**
   * A failed verdict whose every failed command failed only as main already did before the
   * merge (colony's line under it ends `; none is new.`): the work landed and broke nothing.
   */
  readonly onlyMainsFailures: boolean;
}

/** How a sub-planner names a module of its scope that did not land, one note each. */
export const NOT_LANDED_PREFIX = 'not landed: ';

const HEADER = new RegExp(`^${HANDOFF_OPENING} (\\S+) "(.*)"\\s*$`);
const STATUSES: readonly HandoffStatus[] = ['done', 'partial', 'blocked', 'failed'];
const FIELD_KEYS = ['status', 'acceptance', 'written by colony', 'summary', 'commits', 'evidence'] as const;
const LIST_KEYS = ['notes', 'concerns', 'deviations', 'findings', 'feedback', 'follow-ups'] as const;

/** Null when the message is not a handoff (or its status is missing). */
export function readHandoffMessage(content: string): HandoffMessage | null {
  const lines = content.split('\n');
  const header = HEADER.exec(lines[0] ?? '');
  if (header === null) return null;
  const fields = new Map<string, string>();
  const lists = new Map<string, string[]>();
  let field: string | null = null;
  let list: string[] | null = null;
  for (const line of lines.slice(1)) {
    const key = FIELD_KEYS.find((name) => line.startsWith(`${name}:`));
    const listKey = LIST_KEYS.find((name) => line.trimEnd() === `${name}:`);
    if (key !== undefined) {
      field = key;
      list = null;
      fields.set(key, line.slice(key.length + 1).trim());
    } else if (listKey !== undefined) {
      field = null;
      list = [];
      lists.set(listKey, list);
    } else if (list !== null && line.startsWith('- ')) {
      list.push(line.slice(2).trim());
    } else if (list !== null && list.length > 0) {
      // A multi-line item continues until the next item or section.
      list[list.length - 1] = `${list[list.length - 1] ?? ''}\n${line}`;
    } else if (field !== null) {
      fields.set(field, `${fields.get(field) ?? ''}\n${line}`);
    }
  }
  const status = STATUSES.find((each) => each === fields.get('status'));
  if (status === undefined) return null;
  return {
    taskId: header[1] ?? '',
    title: header[2] ?? '',
    status,
    synthetic: fields.has('written by colony'),
    summary: (fields.get('summary') ?? '').trim(),
    notes: lists.get('notes') ?? [],
    concerns: lists.get('concerns') ?? [],
    acceptance: readAcceptance(fields.get('acceptance')),
  };
}

/** `passed at <commit>`, `[claimed done, ]checks failed at <commit>` or `not run: <why>`, then detail lines. */
function readAcceptance(text: string | undefined): AcceptanceReading | null {
  if (text === undefined) return null;
  const headline = text.split('\n', 1)[0]?.trim() ?? '';
  const commit = /\bat ([0-9a-f]{7,40})$/.exec(headline)?.[1] ?? null;
  if (headline.startsWith('passed at ')) return { verdict: 'passed', commit, text, onlyMainsFailures: false };
  if (/^(claimed \w+, )?checks failed at /.test(headline)) return { verdict: 'failed', commit, text, onlyMainsFailures: failedOnlyAsMainDid(text) };
  return { verdict: 'not-run', commit: null, text, onlyMainsFailures: false };
}

/** Whether each failed command of an acceptance section has, right under it, colony's word that none of its failures is new. */
function failedOnlyAsMainDid(text: string): boolean {
  const lines = text.split('\n');
  const failed = lines.flatMap((line, index) => (/^- `.*`: failed/.test(line) ? [index] : []));
  return failed.length > 0 && failed.every((index) => (lines[index + 1] ?? '').trimEnd().endsWith(NOTHING_NEW_FAILING));
}

/** The module paths a handoff's notes say did not land. */
export function notLandedPaths(handoff: HandoffMessage): string[] {
  return handoff.notes.filter((note) => note.startsWith(NOT_LANDED_PREFIX)).map((note) => note.slice(NOT_LANDED_PREFIX.length).trim());
}
