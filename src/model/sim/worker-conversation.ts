import type { Message, ToolCall } from '../messages.js';
import { budgetUsedUp } from './budget-notice.js';
import type { WorkerCall } from './worker-tool-calls.js';
import { readWorkerCall } from './worker-tool-calls.js';

/** What the sim says when it gives up on a task; seeing it again in its own past keeps it quiet. */
export const ABANDON_TEXT = 'I cannot continue with this task.';

export interface ToolOutcome {
  readonly content: string;
  readonly isError: boolean;
}

/** One tool call the sim made earlier, with the result the harness sent back (if any yet). */
export interface WorkerAction {
  /** Order among all actions in the conversation. */
  readonly position: number;
  readonly raw: ToolCall;
  /** The call read back through the tool schemas; null when it was malformed. */
  readonly call: WorkerCall | null;
  readonly result: ToolOutcome | null;
}

/** Everything the sim takes from its conversation. It never looks anywhere else. */
export interface WorkerConversation {
  /** The first user message: the task. Empty when there is none. */
  readonly taskText: string;
  /** How many assistant answers the conversation already holds. */
  readonly turn: number;
  readonly actions: readonly WorkerAction[];
  /** True when an earlier answer of the sim's gave up on the task. */
  readonly abandoned: boolean;
  /** True when colony said the budget is used up: the sim hands off in this answer. */
  readonly budgetUsedUp: boolean;
}

/**
 * What colony says when a worker is given a fresh workspace after a restart: whatever the sim
 * wrote before is not there, so it starts its steps over, as a model reading that would.
 */
const FRESH_WORKSPACE_TEXT = 'You are now in a fresh workspace';

/** Tool errors start with "error: " as well as carrying the flag: not every wire format keeps the flag. */
const ERROR_PREFIX = 'error: ';

export function readToolResult(content: string, isError: boolean): ToolOutcome {
  if (content.startsWith(ERROR_PREFIX)) return { content: content.slice(ERROR_PREFIX.length), isError: true };
  return { content, isError };
}

export function readConversation(messages: readonly Message[]): WorkerConversation {
  const results = new Map<string, ToolOutcome>();
  for (const message of messages) {
    if (message.role === 'tool' && !results.has(message.callId)) {
      results.set(message.callId, readToolResult(message.content, message.isError));
    }
  }
  let taskText: string | null = null;
  let turn = 0;
  let abandoned = false;
  const actions: WorkerAction[] = [];
  for (const message of messages) {
    if (message.role === 'user' && taskText === null) taskText = message.content;
    else if (message.role === 'user' && message.content.includes(FRESH_WORKSPACE_TEXT)) actions.length = 0;
    if (message.role !== 'assistant') continue;
    turn += 1;
    if (message.toolCalls.length === 0 && message.text.startsWith(ABANDON_TEXT)) abandoned = true;
    for (const raw of message.toolCalls) {
      actions.push({ position: actions.length, raw, call: readWorkerCall(raw), result: results.get(raw.id) ?? null });
    }
  }
  return { taskText: taskText ?? '', turn, actions, abandoned, budgetUsedUp: budgetUsedUp(messages) };
}
