import type { TestVerdict } from './planner-finish.js';
import { budgetFinishInput, finishInput, refusedFinishInput, refusedQuote } from './planner-finish.js';
import { acknowledgeGreenReport } from './planner-green.js';
import type { PlannerConversation } from './planner-conversation.js';
import type { PlannerLedger } from './types.js';
import { firstLine, readLedger } from './planner-ledger.js';
import { baseFolderOf, plural } from './planner-plan.js';
import { droppedModules, FAST_SUITE_MODULES, publishCalls, scratchpadContent } from './planner-publish.js';
import { coveringTestsCommand, coveringTestsIn } from '../reading/covering-tests-protocol.js';
import { testPathFor } from '../scenario/module-render.js';
import type { FinishInput, PlannerCall } from './planner-tool-calls.js';
import type { Scenario } from '../scenario/scenario.js';
import { parseScenario } from '../scenario/scenario.js';
import type { SimOptions } from '../sim-options.js';
import { briefModulePaths, goalNotesLine, MAX_READ_ERRORS, pageRead, pagedGoalOf, pagedScenario, withinPage, type GoalNotes, type PagedGoal } from './paged-goal.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';
import { publishBoundOf } from '../reading/publish-refusals.js';

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
 * need (up to MAX_PUBLISH_CALLS_PER_ANSWER calls an answer; after an answer of its was cut off
 * at the output limit, no more than got through before the cut), else wait while any task has no
 * handoff, else run the project's tests on main once after the last handoff, else finish
 * (failed, when colony refused its last finish and nothing landed since). It answers reminders
 * as it goes: a reflection reminder with a sentence on where it stands, a scratchpad reminder
 * with a write_scratchpad call alongside whatever it does; and it acknowledges messages from
 * the user and colony's fix-up messages in its text.
 */
export function planPlannerTurn(conversation: PlannerConversation, toolNames: readonly string[], options: SimOptions): PlannedPlannerTurn {
  const tools = new Set(toolNames);
  const { decided, standing, scenario, notes } = decide(conversation, tools, options);
  const acknowledged = [
    ...conversation.newUserMessages.map((text) => `Noted your message ("${firstLine(text)}"); it does not change my plan. `),
    ...conversation.newGreenReports.map((failures) => acknowledgeGreenReport(failures, scenario)),
  ];
  const reflected = conversation.reminders.reflection ? `Checked my progress against ${standing.owner}: ${standing.progress}; the plan still holds. ` : '';
  const rewrite =
    conversation.reminders.scratchpad && tools.has(TOOL_NAMES.writeScratchpad) && !decided.calls.some((call) => call.name === TOOL_NAMES.writeScratchpad);
  const scratchpad: PlannerCall[] = rewrite ? [{ name: TOOL_NAMES.writeScratchpad, input: { content: `${standing.scratchpad}\nNext: ${decided.text}` } }] : [];
  // Notes of the page just read, on a line of their own, so what it found outlives the page's text.
  const noted = notes === null ? '' : `\n${goalNotesLine(notes)}`;
  return { text: `${acknowledged.join('')}${reflected}${decided.text}${noted}`, calls: [...scratchpad, ...decided.calls] };
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

/**
 * The bound colony set on publishes in one answer, as its latest refusal for it named, when
 * lower than the sim's own: later answers keep within it.
 */
function publishBoundIn(conversation: PlannerConversation): number | null {
  const bounds = conversation.events.flatMap((event) => (event.kind === 'action' && event.action.result !== null ? [publishBoundOf(event.action.result.content)] : []));
  const bound = bounds.findLast((each) => each !== null) ?? null;
  return bound === null ? null : Math.min(bound, MAX_PUBLISH_CALLS_PER_ANSWER);
}

interface Decision {
  readonly decided: PlannedPlannerTurn;
  readonly standing: Standing;
  /** The brief's scenario; null when it has no usable colony-spec. */
  readonly scenario: Scenario | null;
  /** Notes of the page of a goal read in parts that this answer is the first to see; null when there are none. */
  readonly notes: GoalNotes | null;
}

function decide(conversation: PlannerConversation, tools: ReadonlySet<string>, options: SimOptions): Decision {
  const owner = conversation.scope === null ? 'the goal' : conversation.scope;
  const paged = pagedGoalOf(conversation, options);
  if (paged !== null && paged.cursor.phase !== 'done') return readingDecision(paged, owner, tools);
  const parsed = paged === null ? parseScenario(conversation.brief) : pagedScenario(paged);
  if (!parsed.ok) {
    const progress = 'my brief has no usable colony-spec, so there is nothing I can plan';
    const decided = finish(tools, 'My brief does not say what to build, so I am finishing as blocked.', {
      status: 'blocked',
      summary: 'My brief has no usable colony-spec block, so I cannot tell which modules to build; I published no tasks.',
      notes: [parsed.error],
      feedback: ['Give the planner a brief with a colony-spec block holding JSON with "project" and "modules", as the note shows.'],
    });
    return { decided, standing: { owner, progress, scratchpad: `Progress: ${progress}.` }, scenario: null, notes: paged?.unnoted ?? null };
  }
  const { scenario } = parsed;
  // A sub-planner told which tests cover its area scopes its tasks' tests, as the root planner
  // does on a project whose whole suite is not fast: each task is given the tests that cover it.
  const areaTests = coveringTestsIn(conversation.brief) !== null;
  const scoped = areaTests || scenario.modules.length > FAST_SUITE_MODULES;
  const ledger = readLedger(conversation, scenario);
  const base = baseFolderOf(scenario.modules.map((module) => module.path));
  const pending = publishCalls(scenario, ledger, base, tools, options, scoped);
  // A goal read in parts: only what a page in the conversation still holds can be copied into a brief.
  const ready = paged === null ? pending : pending.filter((call) => callModulePaths(call).every((path) => paged.atHand.has(path)));
  const most = Math.min(publishBoundIn(conversation) ?? MAX_PUBLISH_CALLS_PER_ANSWER, conversation.publishCap ?? MAX_PUBLISH_CALLS_PER_ANSWER);
  const calls = paged === null ? ready.slice(0, most) : withinPage(ready, paged, most);
  const later = pending.length - calls.length;
  const reads = paged === null || ready.length > calls.length ? [] : rereads(paged, pending.filter((call) => !ready.includes(call)));
  const standing = {
    owner,
    progress: progressOf(ledger),
    scratchpad: scratchpadContent(ledger, base, owner, { publishing: calls.length, later }),
  };
  const check = areaTests ? landedTestsCommand(ledger) : scenario.project.test;
  return { decided: decideWith(conversation, tools, { scenario, ledger, calls, reads, standing, check }), standing, scenario, notes: paged?.unnoted ?? null };
}

/** Paging through the goal file for its module list: the next page, or a finish when the file cannot be read. */
function readingDecision(paged: PagedGoal, owner: string, tools: ReadonlySet<string>): Decision {
  const listed = `${paged.modules.length} module${plural(paged.modules.length)} listed so far`;
  const standing = { owner, progress: `reading the goal in parts, ${listed}`, scratchpad: `Reading ${paged.notice.path} in parts: ${listed}; next line ${paged.cursor.line} of ${paged.notice.lines}.` };
  if (paged.readErrors >= MAX_READ_ERRORS || !tools.has(TOOL_NAMES.readFile)) {
    const decided = finish(tools, `I cannot read ${paged.notice.path}, so I am finishing as blocked.`, {
      status: 'blocked',
      summary: `My goal is too large to show whole and I could not read the file it is in (${paged.notice.path}); I published no tasks.`,
      notes: [`read_file failed ${paged.readErrors} time(s) in a row at line ${paged.cursor.line}.`],
    });
    return { decided, standing, scenario: null, notes: paged.unnoted };
  }
  const last = Math.min(paged.cursor.line + paged.pageLines - 1, paged.notice.lines);
  const text = `The goal is too large to show whole; reading ${paged.notice.path} in parts for its module list: lines ${paged.cursor.line}-${last} of ${paged.notice.lines} (${listed}).`;
  return { decided: { text, calls: [pageRead(paged, paged.cursor.line)] }, standing, scenario: null, notes: paged.unnoted };
}

/** The modules a publishing call carries, as its brief's colony-spec names them. */
function callModulePaths(call: PlannerCall): string[] {
  return call.name === TOOL_NAMES.createTask || call.name === TOOL_NAMES.delegate ? briefModulePaths(call.input.brief) : [];
}

/** A read of the lines that hold the first modules to publish whose specs are no longer in the conversation. */
function rereads(paged: PagedGoal, waiting: readonly PlannerCall[]): PlannerCall[] {
  const lines = waiting.flatMap(callModulePaths).filter((path) => !paged.atHand.has(path)).map((path) => paged.lineOf.get(path) ?? 1);
  return lines.length === 0 ? [] : [pageRead(paged, Math.min(...lines))];
}

interface Facts {
  readonly scenario: Scenario;
  readonly ledger: PlannerLedger;
  readonly calls: readonly PlannerCall[];
  /** Reads of the goal file the publishing needs first (a goal read in parts). */
  readonly reads: readonly PlannerCall[];
  readonly standing: Standing;
  /** The command it checks main with; null when nothing it could check landed. */
  readonly check: string | null;
}

/**
 * A sub-planner's check of main: the tests of the modules of its area that landed (the files of
 * the rest are not on main, and a test file that is not there fails the command); null when none
 * landed.
 */
function landedTestsCommand(ledger: PlannerLedger): string | null {
  const landed = ledger.modules.filter((record) => record.phase === 'landed').map((record) => testPathFor(record.module.path));
  return landed.length === 0 ? null : coveringTestsCommand(landed);
}

function decideWith(conversation: PlannerConversation, tools: ReadonlySet<string>, facts: Facts): PlannedPlannerTurn {
  const { scenario, ledger, calls, reads, standing } = facts;
  const check = facts.check ?? scenario.project.test;
  const refusal = ledger.releaseRefusal;
  // Refused, and nothing has landed since: a done finish would be refused again.
  const refused = refusal !== null && refusal.position > ledger.lastHandoffPosition ? refusal : null;
  if (conversation.budgetUsedUp) {
    const input = budgetFinishInput({ ledger, scope: conversation.scope, check }, refused);
    return finish(tools, `The budget is used up; finishing as ${input.status ?? 'done'} with what landed.`, input);
  }
  if (calls.length > 0) {
    const scratchpad: PlannerCall[] = tools.has(TOOL_NAMES.writeScratchpad) ? [{ name: TOOL_NAMES.writeScratchpad, input: { content: standing.scratchpad } }] : [];
    return { text: publishText(calls, ledger.tasks.length === 0), calls: [...scratchpad, ...calls, ...reads] };
  }
  if (reads.length > 0) return { text: 'Reading again the lines of the goal that hold what I publish next.', calls: reads };
  const open = ledger.tasks.filter((task) => task.handoff === null);
  if (open.length > 0) {
    const shown = open.slice(0, MAX_IDS_SHOWN).map((task) => task.id);
    const ids = open.length > MAX_IDS_SHOWN ? `${shown.join(', ')} and ${open.length - MAX_IDS_SHOWN} more` : shown.join(', ');
    const text = `Waiting for ${open.length} handoff${plural(open.length)} (task${plural(open.length)} ${ids}); nothing to do until one arrives.`;
    return { text, calls: [] };
  }
  const verdict = facts.check === null ? NOTHING_LANDED : testVerdict(ledger, check, tools);
  if (verdict === null) {
    const text = check === scenario.project.test ? "Nothing is open, so I am running the project's tests on main." : "Nothing is open, so I am running my area's tests on main.";
    return { text, calls: [{ name: TOOL_NAMES.runCommand, input: { command: check } }] };
  }
  if (refused !== null) {
    const input = refusedFinishInput({ ledger, scope: conversation.scope, verdict, check }, refused);
    const text = `colony refused my finish: main's release check fails (${refusedQuote(refused)}), and nothing I can fix explains it; finishing as failed.`;
    return finish(tools, text, input);
  }
  const input = finishInput({ ledger, scope: conversation.scope, verdict, check });
  return finish(tools, `Everything I published has handed off; finishing as ${input.status ?? 'done'}.`, input);
}

/** `12 of 40 modules landed, 20 with a task, 1 given up`. */
function progressOf(ledger: PlannerLedger): string {
  const total = ledger.modules.length;
  const landed = ledger.modules.filter((record) => record.phase === 'landed').length;
  const open = ledger.modules.filter((record) => record.phase === 'open').length;
  const dropped = droppedModules(ledger).length;
  return `${landed} of ${total} module${plural(total)} landed, ${open} with a task${dropped > 0 ? `, ${dropped} given up` : ''}`;
}

/** A sub-planner none of whose modules landed has no tests of its own on main to run. */
const NOTHING_LANDED: TestVerdict = { kind: 'not-run', reason: 'none of my modules landed, so main has no tests of mine to run', failed: false };

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
