import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { rgPath } from '@vscode/ripgrep';
import type { Message, ToolCall } from '../../model/messages.js';
import type { SimOptions } from '../sim-options.js';
import { simWorkerTurn } from '../worker/worker-policy.js';

/**
 * A small, real executor for the worker tools, used by the sim's tests: it applies each call
 * to a directory on disk and answers the way the harness's tools do. It validates arguments
 * itself (not with the sim's schemas) and says which kind of malformed call it rejected.
 */

export const WORKER_TOOL_NAMES = [
  'read_file',
  'write_file',
  'edit_file',
  'list_dir',
  'search',
  'run_command',
  'merge_to_main',
  'submit_handoff',
  'write_scratchpad',
] as const;

export type RejectionKind = 'invalid-json' | 'unknown-tool' | 'missing-field' | 'wrong-type';

export interface ExecutedCall {
  readonly call: ToolCall;
  readonly content: string;
  readonly isError: boolean;
  /** Why the call was rejected before running, when it was malformed. */
  readonly rejected: RejectionKind | null;
}

type FieldType = 'string' | 'number' | 'boolean' | 'strings';
const FIELDS: Record<string, Record<string, { type: FieldType; required: boolean }>> = {
  read_file: { path: { type: 'string', required: true } },
  write_file: { path: { type: 'string', required: true }, content: { type: 'string', required: true } },
  edit_file: {
    path: { type: 'string', required: true },
    old_string: { type: 'string', required: true },
    new_string: { type: 'string', required: true },
    replace_all: { type: 'boolean', required: false },
  },
  list_dir: { path: { type: 'string', required: true } },
  search: { pattern: { type: 'string', required: true }, path: { type: 'string', required: false }, glob: { type: 'string', required: false } },
  run_command: { command: { type: 'string', required: true }, timeout_seconds: { type: 'number', required: false } },
  merge_to_main: { message: { type: 'string', required: true } },
  submit_handoff: {
    status: { type: 'string', required: true },
    summary: { type: 'string', required: true },
    evidence: { type: 'string', required: false },
    notes: { type: 'strings', required: false },
    concerns: { type: 'strings', required: false },
    deviations: { type: 'strings', required: false },
    findings: { type: 'strings', required: false },
    feedback: { type: 'strings', required: false },
    follow_ups: { type: 'strings', required: false },
  },
  write_scratchpad: { content: { type: 'string', required: true } },
};

function hasType(value: unknown, type: FieldType): boolean {
  if (type === 'strings') return Array.isArray(value) && value.every((item) => typeof item === 'string');
  return typeof value === type;
}

type Arguments = Record<string, unknown>;
type Validation = { ok: true; args: Arguments } | { ok: false; kind: RejectionKind; error: string };

function validate(call: ToolCall): Validation {
  const fields = FIELDS[call.name];
  if (fields === undefined) return { ok: false, kind: 'unknown-tool', error: `There is no tool named ${call.name}.` };
  let args: unknown;
  try {
    args = JSON.parse(call.input);
  } catch {
    return { ok: false, kind: 'invalid-json', error: `The arguments of ${call.name} are not valid JSON.` };
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { ok: false, kind: 'wrong-type', error: 'The arguments must be a JSON object.' };
  }
  const record = args as Arguments;
  for (const [name, field] of Object.entries(fields)) {
    const value = record[name];
    if (value === undefined) {
      if (field.required) return { ok: false, kind: 'missing-field', error: `${call.name} needs ${name}.` };
    } else if (!hasType(value, field.type)) {
      return { ok: false, kind: 'wrong-type', error: `${name} of ${call.name} must be a ${field.type}.` };
    }
  }
  return { ok: true, args: record };
}

export interface ExecutorHooks {
  /** Answers merge_to_main; the default merges cleanly. `attempt` counts from 1. */
  readonly onMerge?: (attempt: number) => { content: string; isError: boolean };
  /** Fails a call before it runs when it returns an error text. */
  readonly failCall?: (call: ToolCall, args: Arguments) => string | null;
  /** Answers a run_command itself (its report, as colony writes one) instead of running it, when it returns one. */
  readonly answerCommand?: (command: string) => string | null;
}

export function createToolExecutor(dir: string, hooks: ExecutorHooks = {}): (call: ToolCall) => ExecutedCall {
  let merges = 0;
  return (call) => {
    const validation = validate(call);
    if (!validation.ok) return { call, content: validation.error, isError: true, rejected: validation.kind };
    const injected = hooks.failCall?.(call, validation.args) ?? null;
    if (injected !== null) return { call, content: injected, isError: true, rejected: null };
    const args = validation.args;
    const text = (name: string): string => String(args[name]);
    const answer = (content: string, isError = false): ExecutedCall => ({ call, content, isError, rejected: null });
    const path = typeof args.path === 'string' ? join(dir, args.path) : dir;
    switch (call.name) {
      case 'read_file':
        return existsSync(path) && statSync(path).isFile() ? answer(readFileSync(path, 'utf8')) : answer(`No file at ${text('path')}.`, true);
      case 'write_file':
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, text('content'));
        return answer(`Wrote ${text('content').length} characters to ${text('path')}.`);
      case 'edit_file': {
        if (!existsSync(path)) return answer(`No file at ${text('path')}.`, true);
        const before = readFileSync(path, 'utf8');
        const occurrences = before.split(text('old_string')).length - 1;
        if (occurrences === 0) return answer(`old_string was not found in ${text('path')}.`, true);
        if (occurrences > 1 && args.replace_all !== true) return answer(`old_string occurs ${occurrences} times in ${text('path')}.`, true);
        writeFileSync(path, before.split(text('old_string')).join(text('new_string')));
        return answer(`Edited ${text('path')}.`);
      }
      case 'list_dir':
        if (!existsSync(path)) return answer(`No folder at ${text('path')}.`, true);
        return answer(
          readdirSync(path, { withFileTypes: true })
            .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
            .sort()
            .join('\n'),
        );
      case 'search': {
        // ripgrep, as colony's search tool runs it: `path:line:text` per match, paths from the root.
        const globs = typeof args.glob === 'string' ? ['--glob', args.glob] : [];
        const target = typeof args.path === 'string' ? args.path : '.';
        const found = spawnSync(rgPath, ['--line-number', '--with-filename', '--no-heading', '--color', 'never', '--sort', 'path', ...globs, '--glob', '!.git', '--regexp', text('pattern'), '--', target], { cwd: dir, encoding: 'utf8' });
        const matches = found.stdout.split('\n').filter((line) => line.length > 0).map((line) => line.replace(/^\.\//, ''));
        return answer(matches.length === 0 ? 'no matches' : matches.join('\n'));
      }
      case 'write_scratchpad':
        return answer(`Scratchpad saved (${text('content').length} characters).`);
      case 'run_command': {
        const answered = hooks.answerCommand?.(text('command')) ?? null;
        if (answered !== null) return answer(answered);
        const timeout = typeof args.timeout_seconds === 'number' ? args.timeout_seconds : 60;
        const result = spawnSync('sh', ['-c', text('command')], { cwd: dir, encoding: 'utf8', timeout: timeout * 1000 });
        const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
        if (result.error !== undefined) return answer(`timed out after ${timeout}s\n\n${output}`, true);
        if (result.signal !== null) return answer(`killed by signal ${result.signal}\n\n${output}`, true);
        return answer(`exit code: ${result.status ?? 1}\n\n${output}`, result.status !== 0);
      }
      case 'merge_to_main': {
        merges += 1;
        const merged = hooks.onMerge?.(merges) ?? { content: 'merged into main as abc123', isError: false };
        return answer(merged.content, merged.isError);
      }
      default:
        return answer('Handoff submitted.');
    }
  };
}

export interface DrivenRun {
  readonly messages: readonly Message[];
  readonly executed: readonly ExecutedCall[];
  /** The arguments of the accepted submit_handoff call, or null when there was none. */
  readonly handoff: Arguments | null;
  readonly turns: number;
}

export const REMINDER = 'Reminder: you did not call a tool. Call a tool to keep working, or submit_handoff to finish.';

export interface DriveOptions extends ExecutorHooks {
  readonly dir: string;
  readonly task: string;
  readonly options: SimOptions;
  readonly maxTurns?: number;
  /** The tools offered to the sim; all worker tools when not given. */
  readonly toolNames?: readonly string[];
  /** A user message to add before the given turn, like a harness reminder. */
  readonly interject?: (turn: number) => string | null;
  /** Called before each turn with the conversation, which it may change in place (compact it, say). */
  readonly beforeTurn?: (messages: Message[], turn: number) => void;
}

/** Runs the sim worker against the executor until it hands off, stops calling tools, or runs out of turns. */
export function driveWorker(drive: DriveOptions): DrivenRun {
  const execute = createToolExecutor(drive.dir, drive);
  const messages: Message[] = [
    { role: 'system', content: 'You are a worker. Build what the task asks, merge it and hand off.' },
    { role: 'user', content: drive.task },
  ];
  const executed: ExecutedCall[] = [];
  let handoff: Arguments | null = null;
  let textOnly = 0;
  let turns = 0;
  while (turns < (drive.maxTurns ?? 60) && handoff === null && textOnly < 3) {
    const extra = drive.interject?.(turns) ?? null;
    if (extra !== null) messages.push({ role: 'user', content: extra });
    drive.beforeTurn?.(messages, turns);
    const answer = simWorkerTurn(messages, drive.toolNames ?? WORKER_TOOL_NAMES, drive.options);
    turns += 1;
    messages.push({ role: 'assistant', text: answer.text, toolCalls: answer.toolCalls });
    if (answer.toolCalls.length === 0) {
      textOnly += 1;
      messages.push({ role: 'user', content: REMINDER });
      continue;
    }
    for (const call of answer.toolCalls) {
      const result = execute(call);
      executed.push(result);
      messages.push({ role: 'tool', callId: call.id, toolName: call.name, content: result.content, isError: result.isError });
      if (call.name === 'submit_handoff' && !result.isError) handoff = JSON.parse(call.input) as Arguments;
    }
  }
  return { messages, executed, handoff, turns };
}

export const EXAMPLE_DIR = resolve(import.meta.dirname, '../../../examples/text-kit');

const exampleCopies: string[] = [];

/** A fresh copy of the text-kit example in a temporary folder; removeExampleCopies deletes them all. */
export function copyExample(): string {
  const dir = mkdtempSync(join(tmpdir(), 'colony-sim-worker-'));
  exampleCopies.push(dir);
  cpSync(EXAMPLE_DIR, dir, { recursive: true });
  return dir;
}

export function removeExampleCopies(): void {
  for (const dir of exampleCopies.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Runs the project's own tests in `dir`, for real. */
export function projectTestsPass(dir: string): boolean {
  return spawnSync('node', ['--test'], { cwd: dir, encoding: 'utf8' }).status === 0;
}
