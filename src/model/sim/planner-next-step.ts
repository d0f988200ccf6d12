import type { TestVerdict } from './planner-finish.js';
import { budgetFinishInput, finishInput } from './planner-finish.js';
import type { PlannerConversation } from './planner-conversation.js';
import type { PlannerLedger } from './planner-ledger.js';
import { firstLine, readLedger } from './planner-ledger.js';
import { baseFolderOf, plural } from './planner-plan.js';
import { publishCalls, scratchpadContent } from './planner-publish.js';
import type { FinishInput, PlannerCall } from './planner-tool-calls.js';
import { parseScenario } from './scenario.js';

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
 * The planner's next step, decided only from its conversation: publish whatever its modules
 * need (all of it in one turn), else wait while any task has no handoff, else run the
 * project's tests on main once after the last handoff, else finish.
 */
export function planPlannerTurn(conversation: PlannerConversation, toolNames: readonly string[]): PlannedPlannerTurn {
  const decided = decide(conversation, new Set(toolNames));
  const acknowledged = conversation.newUserMessages.map(
    (text) => `Noted your message ("${firstLine(text)}"); it does not change my plan. `,
  );
  return { text: `${acknowledged.join('')}${decided.text}`, calls: decided.calls };
}

function decide(conversation: PlannerConversation, tools: ReadonlySet<string>): PlannedPlannerTurn {
  const parsed = parseScenario(conversation.brief);
  if (!parsed.ok) {
    return finish(tools, 'My brief does not say what to build, so I am finishing as blocked.', {
      status: 'blocked',
      summary: 'My brief has no usable colony-spec block, so I cannot tell which modules to build; I published no tasks.',
      notes: [parsed.error],
      feedback: ['Give the planner a brief with a colony-spec block holding JSON with "project" and "modules", as the note shows.'],
    });
  }
  const { scenario } = parsed;
  const ledger = readLedger(conversation, scenario);
  const base = baseFolderOf(scenario.modules.map((module) => module.path));
  const owner = conversation.scope === null ? 'the goal' : conversation.scope;
  if (conversation.budgetUsedUp) {
    const input = budgetFinishInput(scenario, ledger, conversation.scope);
    return finish(tools, `The budget is used up; finishing as ${input.status ?? 'done'} with what landed.`, input);
  }
  const calls = publishCalls(scenario, ledger, base, tools);
  if (calls.length > 0) {
    const scratchpad: PlannerCall[] = tools.has('write_scratchpad')
      ? [{ name: 'write_scratchpad', input: { content: scratchpadContent(ledger, base, owner, calls.length) } }]
      : [];
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
    return { text, calls: [{ name: 'run_command', input: { command: scenario.project.test } }] };
  }
  const input = finishInput({ scenario, ledger, scope: conversation.scope, verdict });
  return finish(tools, `Everything I published has handed off; finishing as ${input.status ?? 'done'}.`, input);
}

/** What main's tests say, from a run after the last handoff; null when they should run now. */
function testVerdict(ledger: PlannerLedger, command: string, tools: ReadonlySet<string>): TestVerdict | null {
  const run = ledger.lastTestRun;
  if (run !== null && run.position > ledger.lastHandoffPosition) return { kind: 'ran', run };
  if (!tools.has('run_command')) {
    const reason = `I could not check main: no run_command tool was offered to me, so \`${command}\` did not run.`;
    return { kind: 'not-run', reason, failed: false };
  }
  const errors = ledger.testRunErrors;
  if (errors.length < MAX_TEST_RUN_ERRORS) return null;
  return { kind: 'not-run', reason: `\`${command}\` did not run on main ${errors.length} times: ${errors.at(-1) ?? ''}`, failed: true };
}

function finish(tools: ReadonlySet<string>, text: string, input: FinishInput): PlannedPlannerTurn {
  if (!tools.has('finish')) return { text: `I have no finish tool to end with. ${input.summary}`, calls: [] };
  return { text, calls: [{ name: 'finish', input }] };
}

function publishText(calls: readonly PlannerCall[], first: boolean): string {
  const delegated = calls.flatMap((call) => (call.name === 'delegate' ? [call.input.scope] : []));
  const created = calls.filter((call) => call.name === 'create_task');
  const retries = created.filter((call) => call.name === 'create_task' && call.input.retry_of !== undefined).length;
  const parts: string[] = [];
  if (delegated.length > 0) parts.push(`delegating ${delegated.join(', ')}`);
  if (created.length > 0) {
    const retried = retries === 0 ? '' : ` (${retries} retr${retries === 1 ? 'y' : 'ies'})`;
    parts.push(`creating ${created.length} task${plural(created.length)}${retried}`);
  }
  return `${first ? 'Plan made' : 'Replanning'}: ${parts.join(' and ')}.`;
}
