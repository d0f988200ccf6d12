import type { Message, ToolCall } from '../messages.js';
import { budgetUsedUp } from './budget-notice.js';
import type { HandoffMessage } from './handoff-message.js';
import { readHandoffMessage, USER_MESSAGE_HEADER } from './handoff-message.js';
import type { PlannerCall } from './planner-tool-calls.js';
import { readPlannerCall } from './planner-tool-calls.js';
import type { ToolOutcome } from './worker-conversation.js';
import { readToolResult } from './worker-conversation.js';

/** One tool call the sim planner made earlier, with the result the harness sent back (if any). */
export interface PlannerAction {
  readonly raw: ToolCall;
  /** The call read back through the planner tool schemas; null when it is not one. */
  readonly call: PlannerCall | null;
  readonly result: ToolOutcome | null;
}

/** What happened in the conversation after the brief, in order. */
export type PlannerEvent =
  | { readonly kind: 'action'; readonly position: number; readonly action: PlannerAction }
  | { readonly kind: 'handoff'; readonly position: number; readonly handoff: HandoffMessage }
  | { readonly kind: 'user-message'; readonly position: number; readonly text: string };

/** Everything the sim planner takes from its conversation. It never looks anywhere else. */
export interface PlannerConversation {
  /** The first user message: the goal, or a sub-planner's scope line and brief. */
  readonly brief: string;
  /** The scope from a sub-planner's first line; null for the root planner. */
  readonly scope: string | null;
  /** How many assistant answers the conversation already holds. */
  readonly turn: number;
  readonly events: readonly PlannerEvent[];
  /** Messages from the user that arrived since the sim's last answer, to acknowledge. */
  readonly newUserMessages: readonly string[];
  /** True when colony said the budget is used up: the sim finishes in this answer. */
  readonly budgetUsedUp: boolean;
}

const SCOPE_LINE = /^Your scope: `([^`]+)`/;

export function readPlannerConversation(messages: readonly Message[]): PlannerConversation {
  const results = new Map<string, ToolOutcome>();
  for (const message of messages) {
    if (message.role === 'tool' && !results.has(message.callId)) {
      results.set(message.callId, readToolResult(message.content, message.isError));
    }
  }
  let brief: string | null = null;
  let turn = 0;
  let newUserMessages: string[] = [];
  const events: PlannerEvent[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      turn += 1;
      newUserMessages = [];
      for (const raw of message.toolCalls) {
        const action = { raw, call: readPlannerCall(raw), result: results.get(raw.id) ?? null };
        events.push({ kind: 'action', position: events.length, action });
      }
    } else if (message.role === 'user' && brief === null) {
      brief = message.content;
    } else if (message.role === 'user') {
      const handoff = readHandoffMessage(message.content);
      if (handoff !== null) events.push({ kind: 'handoff', position: events.length, handoff });
      if (message.content.startsWith(USER_MESSAGE_HEADER)) {
        const text = message.content.slice(USER_MESSAGE_HEADER.length).trim();
        events.push({ kind: 'user-message', position: events.length, text });
        newUserMessages.push(text);
      }
    }
  }
  const scope = SCOPE_LINE.exec(brief ?? '')?.[1] ?? null;
  return { brief: brief ?? '', scope, turn, events, newUserMessages, budgetUsedUp: budgetUsedUp(messages) };
}
