import type { ConversationParts } from '../conversation-parts.js';
import { readPlannerParts } from './planner-conversation.js';
import { readLedger } from './planner-ledger.js';
import { nextPlannerStep } from './planner-next-step.js';
import { baseFolderOf, plural } from './planner-plan.js';
import { droppedModules, needsWork } from './planner-publish.js';
import type { PlannerCarried } from './planner-state.js';
import { encodeLedger } from './planner-state.js';
import { parseScenario } from '../scenario/scenario.js';
import { encodePagedGoal, pagedGoalOf, pagedScenario } from './paged-goal.js';
import type { SimOptions } from '../sim-options.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';

/** Ids and paths named in a summary before the rest are counted. */
const NAMED = 8;
/** The tools a planner has, for naming its next step when a compaction request offers none. */
const PLANNER_TOOLS: ReadonlySet<string> = new Set([TOOL_NAMES.createTask, TOOL_NAMES.delegate, TOOL_NAMES.writeScratchpad, TOOL_NAMES.finish, TOOL_NAMES.runCommand]);

/**
 * The sim planner's summary of a conversation: a few lines a person can read (the goal, what
 * landed, what is in flight, the open threads, the next step) and the state it goes on from
 * (planner-state.ts), derived exactly as its next answer would derive it.
 */
export function plannerSummary(parts: ConversationParts, options: SimOptions): { lines: string[]; state: PlannerCarried } {
  const conversation = readPlannerParts(parts);
  const paged = pagedGoalOf(conversation, options);
  const parsed = paged === null ? parseScenario(conversation.brief) : paged.cursor.phase === 'done' ? pagedScenario(paged) : null;
  const scenario = parsed?.ok === true ? parsed.scenario : null;
  const ledger = scenario === null ? null : readLedger(conversation, scenario);
  const owner = conversation.scope === null ? 'the goal' : `\`${conversation.scope}\``;
  const next = nextPlannerStep(conversation, PLANNER_TOOLS, options);
  const state: PlannerCarried = {
    role: 'planner',
    turn: conversation.turn,
    events: conversation.nextPosition,
    unanswered: [...conversation.newUserMessages],
    unansweredGreen: conversation.newGreenReports.map((failures) => [...failures]),
    budgetUsedUp: conversation.budgetUsedUp,
    publishCap: conversation.publishCap,
    reminders: conversation.reminders,
    ledger:
      ledger === null
        ? { tasks: [], modules: [], lastHandoff: -1, lastTestRun: null, testRunErrors: [], pending: [], releaseRefusal: null }
        : encodeLedger(ledger, scenario),
    ...(paged === null ? {} : { paged: encodePagedGoal(paged) }),
  };
  if (paged !== null && paged.cursor.phase !== 'done') {
    const lines = [`Goal: ${owner}, too large to show whole: reading ${paged.notice.path} in parts, ${paged.modules.length} modules listed so far.`, `Next step: ${next.text}`];
    return { lines, state };
  }
  if (scenario === null || ledger === null) {
    const lines = [`Goal: ${owner}, but the brief has no colony-spec I can plan from.`, `Next step: ${next.text}`];
    return { lines, state };
  }
  const total = ledger.modules.length;
  const landed = ledger.modules.filter((record) => record.phase === 'landed').length;
  const dropped = droppedModules(ledger);
  const open = ledger.tasks.filter((task) => task.handoff === null);
  const waiting = ledger.modules.filter((record) => needsWork(record) && !dropped.includes(record));
  const base = baseFolderOf(scenario.modules.map((module) => module.path));
  const lines = [
    `Goal: ${owner}: ${total} module${plural(total)} under ${base === '' ? 'the repository root' : base}, as the colony-spec in the first message lists them.`,
    `Done: ${landed} of ${total} landed${dropped.length > 0 ? `, ${dropped.length} given up` : ''}; ` +
      `${ledger.tasks.length} task${plural(ledger.tasks.length)} published, ${ledger.tasks.length - open.length} handed off.`,
    `In flight: ${open.length === 0 ? 'nothing' : `${open.length} task${plural(open.length)} (${named(open.map((task) => task.id))})`}.`,
    `Open threads: ${openThreads(waiting.map((record) => record.module.path), ledger.lastTestRun, conversation.newUserMessages.length)}.`,
    `Next step: ${next.text}`,
  ];
  return { lines, state };
}

function openThreads(waiting: readonly string[], lastRun: { readonly passed: boolean; readonly statusLine: string } | null, unanswered: number): string {
  const threads: string[] = [];
  if (waiting.length > 0) threads.push(`${waiting.length} module${plural(waiting.length)} to publish or retry (${named(waiting)})`);
  if (lastRun !== null && !lastRun.passed) threads.push(`the last test run on main failed (${lastRun.statusLine})`);
  if (unanswered > 0) threads.push(`${unanswered} message${plural(unanswered)} from the user to answer`);
  return threads.length === 0 ? 'none' : threads.join('; ');
}

function named(items: readonly string[]): string {
  return items.length > NAMED ? `${items.slice(0, NAMED).join(', ')} and ${items.length - NAMED} more` : items.join(', ');
}
