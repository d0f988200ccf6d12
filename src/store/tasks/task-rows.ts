import { z } from 'zod';
import { handoffSchema } from '../../events/handoff.js';
import type { Handoff } from '../../events/handoff.js';
import type { InboxMessage, RunRequest, TaskRecord } from './task-store.js';

/**
 * A task as a store keeps it: the record's fields in their creation order (`seq`), the handoff,
 * paths and acceptance as JSON text, checked on their way in and again on their way out.
 */
export type StoredTaskRow = Omit<TaskRecord, 'handoff' | 'paths' | 'acceptance'> & {
  readonly seq: number;
  readonly handoff: string | null;
  readonly paths: string;
  readonly acceptance: string;
};

/** An inbox message as a store keeps it, the handoff still JSON. */
export type StoredInboxRow = Omit<InboxMessage, 'handoff' | 'sender'> & { readonly handoff: string | null; readonly sender: string | null };

/** Rejects a time that is not whole milliseconds (a programmer error); `name` says which. */
export function checkTime(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`${name} must be whole milliseconds, got ${String(value)}.`);
  }
}

/** Checks a handoff on its way in; an invalid one is a programmer error and throws. */
export function handoffToJson(taskId: string, handoff: Handoff): string {
  const parsed = handoffSchema.safeParse(handoff);
  if (!parsed.success) {
    throw new TypeError(`Invalid handoff for task ${taskId}:\n${z.prettifyError(parsed.error)}`);
  }
  return JSON.stringify(parsed.data);
}

const stringListSchema = z.array(z.string());

/** Checks declared paths on their way in; anything but a list of strings is a programmer error and throws. */
export function pathsToJson(taskId: string, paths: readonly string[] | undefined): string {
  return stringListToJson(`paths for task ${taskId}`, paths);
}

/** Checks acceptance commands on their way in, like `pathsToJson`. */
export function acceptanceToJson(taskId: string, acceptance: readonly string[] | undefined): string {
  return stringListToJson(`acceptance commands for task ${taskId}`, acceptance);
}

function stringListToJson(what: string, list: readonly string[] | undefined): string {
  const parsed = stringListSchema.safeParse(list ?? []);
  if (!parsed.success) {
    throw new TypeError(`Invalid ${what}:\n${z.prettifyError(parsed.error)}`);
  }
  return JSON.stringify(parsed.data);
}

/** A stored list of strings read back; `what` names it in the error when the row is damaged. */
function stringListFromJson(json: string, what: string, path: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new Error(`${what} in ${path} are damaged: they are not JSON (${String(error)}).`, { cause: error });
  }
  const parsed = stringListSchema.safeParse(value);
  if (!parsed.success) {
    throw new Error(`${what} in ${path} are damaged: they are not a list of strings.`);
  }
  return parsed.data;
}

/**
 * Reads a stored handoff back through the schema, so a row damaged outside colony (edited by
 * hand, written by a broken version) is reported where it is rather than passed on.
 */
function handoffFromJson(json: string, whose: string, path: string): Handoff {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new Error(`${whose} in ${path} is damaged: it is not JSON (${String(error)}).`, { cause: error });
  }
  const parsed = handoffSchema.safeParse(value);
  if (!parsed.success) {
    throw new Error(`${whose} in ${path} is damaged: it is not a handoff.\n${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/** The record a stored row holds; `path` names the store in the error when the row is damaged. */
export function taskFromRow(row: StoredTaskRow, path: string): TaskRecord {
  return {
    id: row.id,
    runId: row.runId,
    parentTaskId: row.parentTaskId,
    createdBy: row.createdBy,
    kind: row.kind,
    title: row.title,
    body: row.body,
    scope: row.scope,
    retryOf: row.retryOf,
    paths: stringListFromJson(row.paths, `The paths of task ${row.id}`, path),
    acceptance: stringListFromJson(row.acceptance, `The acceptance commands of task ${row.id}`, path),
    status: row.status,
    attempt: row.attempt,
    leaseHolder: row.leaseHolder,
    leaseExpiresAt: row.leaseExpiresAt,
    createdAt: row.createdAt,
    closedAt: row.closedAt,
    handoff: row.handoff === null ? null : handoffFromJson(row.handoff, `The handoff of task ${row.id}`, path),
  };
}

/** The message a stored row holds; `path` names the store in the error when the row is damaged. */
export function messageFromRow(row: StoredInboxRow, path: string): InboxMessage {
  const sender = row.fromTaskId ?? '(none)';
  const whose = `The handoff of task ${sender} in inbox message ${row.seq} of task ${row.recipientTaskId}`;
  return {
    seq: row.seq,
    runId: row.runId,
    recipientTaskId: row.recipientTaskId,
    fromTaskId: row.fromTaskId,
    handoff: row.handoff === null ? null : handoffFromJson(row.handoff, whose, path),
    text: row.text,
    createdAt: row.createdAt,
    // Messages left before colony wrote its own have no sender: a person left them.
    sender: row.handoff !== null ? null : row.sender === 'colony' ? 'colony' : 'person',
  };
}

/** What a person asks of a run, as a store is given it: the kind and its own value. */
export type RunRequestKind = { readonly kind: 'workers'; readonly workers: number } | { readonly kind: 'stop'; readonly taskId: string } | { readonly kind: 'green' };

/** A run request as a store keeps it: every kind's value in a column of its own, null when not its kind's. */
export interface StoredRunRequestRow {
  readonly seq: number;
  readonly runId: string;
  readonly kind: string;
  readonly taskId: string | null;
  readonly workers: number | null;
  readonly reason: string;
  readonly requestedAt: number;
}

/** The request a stored row holds; throws, naming `where`, for a row whose kind lacks its value. */
export function runRequestFromRow(row: StoredRunRequestRow, where: string): RunRequest {
  const common = { seq: row.seq, runId: row.runId, reason: row.reason, requestedAt: row.requestedAt };
  if (row.kind === 'workers' && row.workers !== null) return { ...common, kind: 'workers', workers: row.workers };
  if (row.kind === 'stop' && row.taskId !== null) return { ...common, kind: 'stop', taskId: row.taskId };
  if (row.kind === 'green') return { ...common, kind: 'green' };
  throw new Error(`The run request ${row.seq} in ${where} is damaged: a ${row.kind} request without its value.`);
}
