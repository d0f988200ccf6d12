import type { TestVerdict } from './planner-finish.js';
import { budgetFinishInput, finishInput, refusedFinishInput, refusedQuote } from './planner-finish.js';
import { acknowledgeGreenReport } from './planner-green.js';
import type { PlannerConversation } from './planner-conversation.js';
import type { PlannerLedger } from './types.js';
import { firstLine, readLedger } from './planner-ledger.js';
import { baseFolderOf, plural } from './planner-plan.js';
import { givenUp, publishCalls, scratchpadContent } from './planner-publish.js';
import type { FinishInput, PlannerCall } from './planner-tool-calls.js';
import type { Scenario } from '../scenario/scenario.js';
import { parseScenario } from '../scenario/scenario.js';
import type { SimOptions } from '../sim-options.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';

/** What the sim planner means to say and do this turn. */
export interface PlannedPlannerTurn {
  readonly text: string;
  readonly calls: readonly PlannerCall[];
}

/** Test command calls that come back without a command report before the planner stops trying. */
const MAX_TEST_RUN_ERRORS = 3;
/** Open task ids named while waiting; beyond this the rest are counted. */
const MAX_IDS_SHOWN = 12;
/**
 * The most create_task and delegate calls in one answer. A goal with more work than this is
 * published over several answers in a row (it does not wait for handoffs in between): one
 * answer with hundreds of calls would be larger than a real model writes at once.
 */
export const MAX_PUBLISH_CALLS_PER_ANSWER = 40;

/**
 * The planner's next step, decided only from its conversation: publish whatever its modules
 * need (up to MAX_PUBLISH_CALLS_PER_ANSWER calls an answer), else wait while any task has no
 * handoff, else run the project's tests on main once after the last handoff, else finish
 * (failed, when colony refused its last finish and nothing landed since). It answers reminders
 * as it goes: a reflection reminder with a sentence on where it stands, a scratchpad reminder
 * with a write_scratchpad call alongside whatever it does; and it acknowledges messages from
 * the user and colony's fix-up messages in its text.
 */
export function planPlannerTurn(conversation: PlannerConversation, toolNames: readonly string[], options: SimOptions): PlannedPlannerTurn {
  const tools = new Set(toolNames);
  const { decided, standing, scenario } = decide(conversation, tools, options);
  const acknowledged = [
    ...conversation.newUserMessages.map((text) => `Noted your message ("${firstLine(text)}"); it does not change my plan. `),
    ...conversation.newGreenReports.map((failures) => acknowledgeGreenReport(failures, scenario)),
  ];
  const reflected = conversation.reminders.reflection ? `Checked my progress against ${standing.owner}: ${standing.progress}; the plan still holds. ` : '';
  const rewrite =
    conversation.reminders.scratchpad && tools.has(TOOL_NAMES.writeScratchpad) && !decided.calls.some((call) => call.name === TOOL_NAMES.writeScratchpad);
  const scratchpad: PlannerCall[] = rewrite ? [{ name: TOOL_NAMES.writeScratchpad, input: { content: `${standing.scratchpad}\nNext: ${decided.text}` } }] : [];
  return { text: `${acknowledged.join('')}${reflected}${decided.text}`, calls: [...scratchpad, ...decided.calls] };
}

/** Where the planner stands, in words: for a reflection, and for a scratchpad written on request. */
interface Standing {
  readonly owner: string;
  readonly progress: string;
  readonly scratchpad: string;
}

/** The step itself, without the words for messages and reminders; also what a summary names as the next step. */
export function nextPlannerStep(conversation: PlannerConversation, tools: ReadonlySet<string>, options: SimOptions): PlannedPlannerTurn {
  return decide(conversation, tools, options).decided;
}

interface Decision {
  readonly decided: PlannedPlannerTurn;
  readonly standing: Standing;
  /** The brief's scenario; null when it has no usable colony-spec. */
  readonly scenario: Scenario | null;
}

function decide(conversation: PlannerConversation, tools: ReadonlySet<string>, options: SimOptions): Decision {
  const owner = conversation.scope === null ? 'the goal' : conversation.scope;
  const parsed = parseScenario(conversation.brief);
  if (!parsed.ok) {
    const progress = 'my brief has no usable colony-spec, so there is nothing I can plan';
    const decided = finish(tools, 'My brief does not say what to build, so I am finishing as blocked.', {
      status: 'blocked',
      summary: 'My brief has no usable colony-spec block, so I cannot tell which modules to build; I published no tasks.',
      notes: [parsed.error],
      feedback: ['Give the planner a brief with a colony-spec block holding JSON with "project" and "modules", as the note shows.'],
    });
    return { decided, standing: { owner, progress, scratchpad: `Progress: ${progress}.` }, scenario: null };
  }
  const { scenario } = parsed;
  const ledger = readLedger(conversation, scenario);
  const base = baseFolderOf(scenario.modules.map((module) => module.path));
  const pending = publishCalls(scenario, ledger, base, tools, options);
  const calls = pending.slice(0, MAX_PUBLISH_CALLS_PER_ANSWER);
  const later = pending.length - calls.length;
  const standing = {
    owner,
    progress: progressOf(ledger),
    scratchpad: scratchpadContent(ledger, base, owner, { publishing: calls.length, later }),
  };
  return { decided: decideWith(conversation, tools, { scenario, ledger, calls, standing }), standing, scenario };
}

interface Facts {
  readonly scenario: Scenario;
  readonly ledger: PlannerLedger;
  readonly calls: readonly PlannerCall[];
  readonly standing: Standing;
}

function decideWith(conversation: PlannerConversation, tools: ReadonlySet<string>, facts: Facts): PlannedPlannerTurn {
  const { scenario, ledger, calls, standing } = facts;
  const refusal = ledger.releaseRefusal;
  // Refused, and nothing has landed since: a done finish would be refused again.
  const refused = refusal !== null && refusal.position > ledger.lastHandoffPosition ? refusal : null;
  if (conversation.budgetUsedUp) {
    const input = budgetFinishInput(scenario, ledger, conversation.scope, refused);
    return finish(tools, `The budget is used up; finishing as ${input.status ?? 'done'} with what landed.`, input);
  }
  if (calls.length > 0) {
    const scratchpad: PlannerCall[] = tools.has(TOOL_NAMES.writeScratchpad) ? [{ name: TOOL_NAMES.writeScratchpad, input: { content: standing.scratchpad } }] : [];
    return { text: publishText(calls, ledger.tasks.length === 0), calls: [...scratchpad, ...calls] };
  }
  const open = ledger.tasks.filter((task) => task.handoff === null);
  if (open.length > 0) {
    const shown = open.slice(0, MAX_IDS_SHOWN).map((task) => task.id);
    const ids = open.length > MAX_IDS_SHOWN ? `${shown.join(', ')} and ${open.length - MAX_IDS_SHOWN} more` : shown.join(', ');
    const text = `Waiting for ${open.length} handoff${plural(open.length)} (task${plural(open.length)} ${ids}); nothing to do until one arrives.`;
    return { text, calls: [] };
  }
  const verdict = testVerdict(ledger, scenario.project.test, tools);
  if (verdict === null) {
    const text = "Nothing is open, so I am running the project's tests on main.";
    return { text, calls: [{ name: TOOL_NAMES.runCommand, input: { command: scenario.project.test } }] };
  }
  if (refused !== null) {
    const input = refusedFinishInput({ scenario, ledger, scope: conversation.scope, verdict }, refused);
    const text = `colony refused my finish: main's release check fails (${refusedQuote(refused)}), and nothing I can fix explains it; finishing as failed.`;
    return finish(tools, text, input);
  }
  const input = finishInput({ scenario, ledger, scope: conversation.scope, verdict });
  return finish(tools, `Everything I published has handed off; finishing as ${input.status ?? 'done'}.`, input);
}

/** `12 of 40 modules landed, 20 with a task, 1 given up`. */
function progressOf(ledger: PlannerLedger): string {
  const total = ledger.modules.length;
  const landed = ledger.modules.filter((record) => record.phase === 'landed').length;
  const open = ledger.modules.filter((record) => record.phase === 'open').length;
  const dropped = ledger.modules.filter(givenUp).length;
  return `${landed} of ${total} module${plural(total)} landed, ${open} with a task${dropped > 0 ? `, ${dropped} given up` : ''}`;
}

/** What main's tests say, from a run after the last handoff; null when they should run now. */
function testVerdict(ledger: PlannerLedger, command: string, tools: ReadonlySet<string>): TestVerdict | null {
  const run = ledger.lastTestRun;
  if (run !== null && run.position > ledger.lastHandoffPosition) return { kind: 'ran', run };
  if (!tools.has(TOOL_NAMES.runCommand)) {
    const reason = `I could not check main: no run_command tool was offered to me, so \`${command}\` did not run.`;
    return { kind: 'not-run', reason, failed: false };
  }
  const errors = ledger.testRunErrors;
  if (errors.length < MAX_TEST_RUN_ERRORS) return null;
  return { kind: 'not-run', reason: `\`${command}\` did not run on main ${errors.length} times: ${errors.at(-1) ?? ''}`, failed: true };
}

function finish(tools: ReadonlySet<string>, text: string, input: FinishInput): PlannedPlannerTurn {
  if (!tools.has(TOOL_NAMES.finish)) return { text: `I have no finish tool to end with. ${input.summary}`, calls: [] };
  return { text, calls: [{ name: TOOL_NAMES.finish, input }] };
}

function publishText(calls: readonly PlannerCall[], first: boolean): string {
  const delegated = calls.flatMap((call) => (call.name === TOOL_NAMES.delegate ? [call.input.scope] : []));
  const created = calls.filter((call) => call.name === TOOL_NAMES.createTask);
  const retries = created.filter((call) => call.name === TOOL_NAMES.createTask && call.input.retry_of !== undefined).length;
  const parts: string[] = [];
  if (delegated.length > 0) parts.push(`delegating ${delegated.join(', ')}`);
  if (created.length > 0) {
    const retried = retries === 0 ? '' : ` (${retries} retr${retries === 1 ? 'y' : 'ies'})`;
    parts.push(`creating ${created.length} task${plural(created.length)}${retried}`);
  }
  return `${first ? 'Plan made' : 'Replanning'}: ${parts.join(' and ')}.`;
}
