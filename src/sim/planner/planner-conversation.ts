import type { Message, ToolCall } from '../../model/messages.js';
import { carriesBudgetNotice } from '../reading/budget-notice.js';
import type { ConversationParts } from '../conversation-parts.js';
import { greenFailureLines } from '../reading/green-protocol.js';
import { CUT_OFF_OPENING, GREEN_FIXUP_OPENING, USER_MESSAGE_HEADER, REFLECTION_REMINDER_OPENING, SCRATCHPAD_REMINDER_OPENING } from '../../protocol/message-openings.js';
import { resultsById, splitConversation } from '../conversation-parts.js';
import type { HandoffMessage } from '../reading/handoff-message.js';
import { readHandoffMessage } from '../reading/handoff-message.js';
import type { PlannerCall } from './planner-tool-calls.js';
import type { PlannerCarried } from './planner-state.js';
import { readPlannerCarried } from './planner-state.js';
import { readPlannerCall } from './planner-tool-calls.js';
import type { PendingReminders } from '../reading/reminder-protocol.js';
import { carriesReminder } from '../reading/reminder-protocol.js';
import type { ToolOutcome } from '../worker/worker-conversation.js';
import { readToolResult } from '../worker/worker-conversation.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';

const SCOPE_LINE = /^Your scope: `([^`]+)`/;

export function readPlannerConversation(messages: readonly Message[]): PlannerConversation {
  return readPlannerParts(splitConversation(messages));
}

/** Reads a conversation already split at its latest summary (conversation-parts.ts). */
export function readPlannerParts(parts: ConversationParts): PlannerConversation {
  const carried = readPlannerCarried(parts.carried);
  const results = new Map<string, ToolOutcome>();
  for (const [callId, result] of resultsById(parts.rest)) results.set(callId, readToolResult(result.content, result.isError));
  let turn = carried?.turn ?? 0;
  let newUserMessages: string[] = [...(carried?.unanswered ?? [])];
  let newGreenReports: string[][] = (carried?.unansweredGreen ?? []).map((failures) => [...failures]);
  let scratchpad = carried?.reminders.scratchpad ?? false;
  let reflection = carried?.reminders.reflection ?? false;
  let publishCap = carried?.publishCap ?? null;
  const first = carried?.events ?? 0;
  const events: PlannerEvent[] = [];
  for (const message of parts.rest) {
    if (message.role === 'assistant') {
      turn += 1;
      newUserMessages = [];
      newGreenReports = [];
      reflection = false;
      // The notes it took of a goal read in parts (paged-goal.ts): its own words, never shrunk.
      const note = message.text.split('\n').find((line) => line.startsWith(GOAL_NOTES_OPENING));
      if (note !== undefined) events.push({ kind: 'goal-notes', position: first + events.length, text: note.slice(GOAL_NOTES_OPENING.length) });
      for (const raw of message.toolCalls) {
        const action = { raw, call: readPlannerCall(raw), result: results.get(raw.id) ?? null };
        if (action.call?.name === TOOL_NAMES.writeScratchpad) scratchpad = false;
        events.push({ kind: 'action', position: first + events.length, action });
      }
      const through = publishedBeforeCutOff(message.toolCalls, results);
      if (through !== null) publishCap = Math.min(publishCap ?? through, through);
    } else if (message.role === 'user') {
      const handoff = readHandoffMessage(message.content);
      if (handoff !== null) events.push({ kind: 'handoff', position: first + events.length, handoff });
      if (message.content.startsWith(USER_MESSAGE_HEADER)) {
        const text = message.content.slice(USER_MESSAGE_HEADER.length).trim();
        events.push({ kind: 'user-message', position: first + events.length, text });
        newUserMessages.push(text);
      }
      if (message.content.trimStart().startsWith(GREEN_FIXUP_OPENING)) {
        const failures = greenFailureLines(message.content);
        events.push({ kind: 'green-fixup', position: first + events.length, failures });
        newGreenReports.push(failures);
      }
      if (carriesReminder(message, SCRATCHPAD_REMINDER_OPENING)) scratchpad = true;
      if (carriesReminder(message, REFLECTION_REMINDER_OPENING)) reflection = true;
    }
  }
  const scope = SCOPE_LINE.exec(parts.firstUser)?.[1] ?? null;
  return {
    brief: parts.firstUser,
    scope,
    turn,
    events,
    nextPosition: first + events.length,
    carried,
    newUserMessages,
    newGreenReports,
    budgetUsedUp: (carried?.budgetUsedUp ?? false) || parts.rest.some(carriesBudgetNotice),
    publishCap,
    reminders: { scratchpad, reflection },
  };
}

/**
 * For an answer whose last call colony answered as cut off at the output limit: how many
 * publishing calls came before that call (at least one), which is as many as an answer holds
 * from then on, as colony's answer asks. Null for an answer that was whole.
 */
function publishedBeforeCutOff(calls: readonly ToolCall[], results: ReadonlyMap<string, ToolOutcome>): number | null {
  const last = calls.at(-1);
  const result = last === undefined ? undefined : results.get(last.id);
  if (result?.isError !== true || !result.content.startsWith(CUT_OFF_OPENING)) return null;
  const publishing = calls.slice(0, -1).filter((call) => call.name === TOOL_NAMES.createTask || call.name === TOOL_NAMES.delegate);
  return Math.max(1, publishing.length);
}

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
  | { readonly kind: 'user-message'; readonly position: number; readonly text: string }
  /** colony's fix-up message: main's green check fails, and the failure came with a commit of one of this planner's tasks. */
  | { readonly kind: 'green-fixup'; readonly position: number; readonly failures: readonly string[] }
  /** What its own answer noted of a page of a goal read in parts: JSON, as paged-goal.ts writes it. */
  | { readonly kind: 'goal-notes'; readonly position: number; readonly text: string };

/** The line of an answer that holds its notes of the page of the goal it read last. */
export const GOAL_NOTES_OPENING = 'Goal notes: ';

/** Everything the sim planner takes from its conversation. It never looks anywhere else. */
export interface PlannerConversation {
  /** The first user message: the goal, or a sub-planner's scope line and brief. */
  readonly brief: string;
  /** The scope from a sub-planner's first line; null for the root planner. */
  readonly scope: string | null;
  /** How many assistant answers the conversation already holds, counting those a summary replaced. */
  readonly turn: number;
  /** What happened after the brief (or after the latest summary), in order. */
  readonly events: readonly PlannerEvent[];
  /** The position the next event would get: positions go on across summaries. */
  readonly nextPosition: number;
  /** The state the latest summary carried, to start from; null when nothing was compacted. */
  readonly carried: PlannerCarried | null;
  /** Messages from the user that arrived since the sim's last answer, to acknowledge. */
  readonly newUserMessages: readonly string[];
  /** The failure lines of each fix-up message that arrived since the sim's last answer, to acknowledge. */
  readonly newGreenReports: readonly (readonly string[])[];
  /** True when colony said the budget is used up: the sim finishes in this answer. */
  readonly budgetUsedUp: boolean;
  /**
   * The most create_task and delegate calls an answer holds since one of its answers was cut
   * off at the output limit: as many as the fewest that got through before a cut. Null when
   * none was cut.
   */
  readonly publishCap: number | null;
  readonly reminders: PendingReminders;
}
