import type { CommandReport } from './command-output.js';
import { commandPassed, readCommandReport } from './command-output.js';
import type { WorkerAction } from './worker-conversation.js';
import { stepKeyOf } from './worker-tool-calls.js';

/**
 * Facts the sim derives from its own earlier tool calls and their results. Only successful
 * results count as progress, so a failed or malformed call is simply made again.
 */

/** What the sim knows of the index file's content on disk. */
export type IndexKnowledge =
  | { readonly state: 'unread' }
  | { readonly state: 'missing' }
  | { readonly state: 'stale' }
  | { readonly state: 'known'; readonly content: string };

/** The index as the sim saw it after each of its calls that read, changed or merged it, oldest first. */
export function indexHistory(actions: readonly WorkerAction[], indexPath: string): IndexKnowledge[] {
  const history: IndexKnowledge[] = [];
  let knowledge: IndexKnowledge = { state: 'unread' };
  for (const { call, result } of actions) {
    if (call === null || result === null) continue;
    const previous: IndexKnowledge = knowledge;
    if (call.name === 'merge_to_main') {
      // A merge brings main's changes into the workspace, so the index may have changed.
      const kind = classifyMerge(result.content, result.isError);
      if (kind === 'conflict' || kind === 'merged') knowledge = { state: 'stale' };
    } else if (call.name === 'read_file' && call.input.path === indexPath) {
      knowledge = result.isError ? { state: 'missing' } : { state: 'known', content: result.content };
    } else if (call.name === 'write_file' && call.input.path === indexPath && !result.isError) {
      knowledge = { state: 'known', content: call.input.content };
    } else if (call.name === 'edit_file' && call.input.path === indexPath) {
      if (result.isError || knowledge.state !== 'known') knowledge = { state: 'stale' };
      else {
        const { old_string: before, new_string: after, replace_all: all } = call.input;
        const content: string = all === true ? knowledge.content.split(before).join(after) : knowledge.content.replace(before, () => after);
        knowledge = { state: 'known', content };
      }
    }
    if (knowledge !== previous) history.push(knowledge);
  }
  return history;
}

/** What the sim knows of the index now. */
export function indexKnowledge(actions: readonly WorkerAction[], indexPath: string): IndexKnowledge {
  return indexHistory(actions, indexPath).at(-1) ?? { state: 'unread' };
}

/** True once the sim has seen `line` in the index, by reading it or by writing it there itself. */
export function indexHasHad(actions: readonly WorkerAction[], indexPath: string, line: string): boolean {
  return indexHistory(actions, indexPath).some(
    (knowledge) => knowledge.state === 'known' && knowledge.content.split('\n').some((each) => each.trim() === line),
  );
}

/** The last successful write_file of `path`. */
export function lastWrite(actions: readonly WorkerAction[], path: string, after = -1): { position: number; content: string } | null {
  let found: { position: number; content: string } | null = null;
  for (const { position, call, result } of actions) {
    if (position <= after || call?.name !== 'write_file' || call.input.path !== path) continue;
    if (result !== null && !result.isError) found = { position, content: call.input.content };
  }
  return found;
}

/** The last successful read_file of `path` after position `after`. */
export function lastRead(actions: readonly WorkerAction[], path: string, after: number): { content: string } | null {
  let found: { content: string } | null = null;
  for (const { position, call, result } of actions) {
    if (position <= after || call?.name !== 'read_file' || call.input.path !== path) continue;
    if (result !== null && !result.isError) found = { content: result.content };
  }
  return found;
}

/** Where the workspace last changed: a successful write or edit, or a merge that brought main in. */
export function lastChangePosition(actions: readonly WorkerAction[]): number {
  let last = -1;
  for (const { position, call, result } of actions) {
    if (call === null || result === null) continue;
    const wrote = (call.name === 'write_file' || call.name === 'edit_file') && !result.isError;
    const merged = call.name === 'merge_to_main' && classifyMerge(result.content, result.isError) === 'conflict';
    if (wrote || merged) last = position;
  }
  return last;
}

/** Every file the sim changed, in the order it first changed them. */
export function touchedFiles(actions: readonly WorkerAction[]): string[] {
  const files: string[] = [];
  for (const { call, result } of actions) {
    if (call === null || result === null || result.isError) continue;
    if ((call.name === 'write_file' || call.name === 'edit_file') && !files.includes(call.input.path)) files.push(call.input.path);
  }
  return files;
}

export interface TestRun {
  readonly position: number;
  readonly report: CommandReport;
  readonly passed: boolean;
}

/** Runs of the project's test command that produced a report (pass or fail). */
export function testRuns(actions: readonly WorkerAction[], command: string): TestRun[] {
  const runs: TestRun[] = [];
  for (const { position, call, result } of actions) {
    if (call?.name !== 'run_command' || call.input.command !== command || result === null) continue;
    const report = readCommandReport(result.content);
    if (report !== null) runs.push({ position, report, passed: commandPassed(report) });
  }
  return runs;
}

export type MergeKind = 'merged' | 'nothing' | 'conflict' | 'error';

export interface MergeAttempt {
  readonly position: number;
  readonly kind: MergeKind;
  /** The conflicted files, for a conflict. */
  readonly files: readonly string[];
  readonly content: string;
}

export function classifyMerge(content: string, isError: boolean): MergeKind {
  if (/^nothing to merge/i.test(content.trim())) return 'nothing';
  if (!isError && /^merged into \S+ as /i.test(content.trim())) return 'merged';
  if (isError && conflictedFiles(content).length > 0) return 'conflict';
  return 'error';
}

function conflictedFiles(content: string): string[] {
  const match = /conflicts in files:\s*(.+)/i.exec(content);
  if (match?.[1] === undefined) return [];
  return match[1]
    .split(',')
    .map((file) => file.trim())
    .filter((file) => file.length > 0);
}

export function mergeAttempts(actions: readonly WorkerAction[]): MergeAttempt[] {
  const attempts: MergeAttempt[] = [];
  for (const { position, call, result } of actions) {
    if (call?.name !== 'merge_to_main' || result === null) continue;
    const kind = classifyMerge(result.content, result.isError);
    attempts.push({ position, kind, files: kind === 'conflict' ? conflictedFiles(result.content) : [], content: result.content });
  }
  return attempts;
}

export interface StepFailures {
  readonly count: number;
  readonly lastError: string;
}

/**
 * Tool errors per step (tool and target). A failed test run is not a tool error, and neither
 * is a merge conflict: the sim acts on those.
 */
export function stepFailures(actions: readonly WorkerAction[]): Map<string, StepFailures> {
  const failures = new Map<string, StepFailures>();
  for (const { call, result } of actions) {
    if (call === null || result === null || !result.isError) continue;
    if (call.name === 'run_command' && readCommandReport(result.content) !== null) continue;
    if (call.name === 'merge_to_main' && classifyMerge(result.content, true) === 'conflict') continue;
    const key = stepKeyOf(call);
    const count = (failures.get(key)?.count ?? 0) + 1;
    failures.set(key, { count, lastError: result.content });
  }
  return failures;
}
