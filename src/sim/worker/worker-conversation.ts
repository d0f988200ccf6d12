import type { Message } from '../../model/messages.js';
import { mainFailingLines } from '../reading/green-protocol.js';
import { carriesBudgetNotice } from '../reading/budget-notice.js';
import type { ConversationParts } from '../conversation-parts.js';
import { resultsById, splitConversation } from '../conversation-parts.js';
import type { PendingReminders } from '../reading/reminder-protocol.js';
import { carriesReminder } from '../reading/reminder-protocol.js';
import { REFLECTION_REMINDER_OPENING, SCRATCHPAD_REMINDER_OPENING } from '../../protocol/message-openings.js';
import type { Scenario, ScenarioResult } from '../scenario/scenario.js';
import { parseScenario } from '../scenario/scenario.js';
import { coveringTestsIn } from '../reading/covering-tests-protocol.js';
import type { WorkerAction, WorkerFacts } from './worker-facts.js';
import { foldWorkerActions, NO_FACTS } from './worker-facts.js';
import { decodeFacts, readWorkerCarried } from './worker-state.js';
import { readWorkerCall } from './worker-tool-calls.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';
import { WORKER_TASK_CONTEXT_HEADING } from '../../protocol/message-openings.js';

/** What the sim says when it gives up on a task; seeing it again in its own past keeps it quiet. */
export const ABANDON_TEXT = 'I cannot continue with this task.';

export interface ToolOutcome {
  readonly content: string;
  readonly isError: boolean;
}

/** Everything the sim takes from its conversation. It never looks anywhere else. */
export interface WorkerConversation {
  /** The task's brief: the first user message without what colony adds under it. Empty when there is none. */
  readonly taskText: string;
  readonly scenario: ScenarioResult;
  /** How many assistant answers the conversation already holds, counting those a summary replaced. */
  readonly turn: number;
  /** What its calls so far add up to; null when the task says nothing it can build. */
  readonly facts: WorkerFacts | null;
  /** True when an earlier answer of the sim's gave up on the task. */
  readonly abandoned: boolean;
  /** True when colony said the budget is used up: the sim hands off in this answer. */
  readonly budgetUsedUp: boolean;
  /** The failures colony's standing notice names as failing on main already; null when it shows none. */
  readonly mainFailing: readonly string[] | null;
  readonly reminders: PendingReminders;
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

/** Reads the conversation from the latest summary's state (if any) and the messages after it. */
export function readConversation(messages: readonly Message[]): WorkerConversation {
  return readWorkerParts(splitConversation(messages));
}

/** Reads a conversation already split at its latest summary (conversation-parts.ts). */
export function readWorkerParts(parts: ConversationParts): WorkerConversation {
  const carried = readWorkerCarried(parts.carried);
  const brief = briefOf(parts.firstUser);
  // The tests it runs are those its brief names as covering the change, else the project's.
  const parsed = parseScenario(parts.firstUser);
  const scenario: ScenarioResult = parsed.ok ? { ok: true, scenario: scopedToBrief(parsed.scenario, brief) } : parsed;
  const results = new Map<string, ToolOutcome>();
  for (const [callId, result] of resultsById(parts.rest)) results.set(callId, readToolResult(result.content, result.isError));
  let turn = carried?.turn ?? 0;
  let abandoned = carried?.abandoned ?? false;
  let scratchpad = carried?.reminders.scratchpad ?? false;
  let reflection = carried?.reminders.reflection ?? false;
  let start: WorkerFacts =
    carried?.facts !== null && carried?.facts !== undefined && scenario.ok ? (decodeFacts(carried.facts, scenario.scenario) ?? NO_FACTS) : NO_FACTS;
  let actions: WorkerAction[] = [];
  for (const message of parts.rest) {
    if (message.role === 'user') {
      if (message.content.includes(FRESH_WORKSPACE_TEXT)) {
        start = NO_FACTS;
        actions = [];
      }
      if (carriesReminder(message, SCRATCHPAD_REMINDER_OPENING)) scratchpad = true;
      if (carriesReminder(message, REFLECTION_REMINDER_OPENING)) reflection = true;
    }
    if (message.role !== 'assistant') continue;
    turn += 1;
    reflection = false;
    if (message.toolCalls.length === 0 && message.text.startsWith(ABANDON_TEXT)) abandoned = true;
    for (const raw of message.toolCalls) {
      const call = readWorkerCall(raw);
      if (call?.name === TOOL_NAMES.writeScratchpad) scratchpad = false;
      actions.push({ call, result: results.get(raw.id) ?? null });
    }
  }
  return {
    taskText: brief,
    scenario,
    turn,
    facts: scenario.ok ? foldWorkerActions(start, actions, scenario.scenario) : null,
    abandoned,
    budgetUsedUp: (carried?.budgetUsedUp ?? false) || parts.rest.some(carriesBudgetNotice),
    mainFailing: mainFailingLines(parts.rest),
    reminders: { scratchpad, reflection },
  };
}

/** The scenario as the worker sees it: its test command is the covering tests its brief names, when it names some. */
function scopedToBrief(scenario: Scenario, brief: string): Scenario {
  const covering = coveringTestsIn(brief);
  return covering === null ? scenario : { ...scenario, project: { ...scenario.project, test: covering } };
}

/** The brief a worker's first message opens with, without colony's section about the task under it. */
function briefOf(firstUser: string): string {
  const at = firstUser.indexOf(`\n\n${WORKER_TASK_CONTEXT_HEADING}`);
  return at === -1 ? firstUser : firstUser.slice(0, at);
}
