import type { Scenario } from '../scenario/scenario.js';
import { indexLineFor } from '../scenario/module-render.js';
import type { WorkerConversation } from './worker-conversation.js';
import type { WorkerFacts } from './worker-facts.js';
import type { PlannedTurn } from './types.js';
import type { WorkerCall } from './worker-tool-calls.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';

/** A scratchpad that fails this often is not tried again: notes are not worth failing the task for. */
const SCRATCHPAD_FAILURES_TOLERATED = 3;

export interface ReminderContext {
  readonly conversation: WorkerConversation;
  readonly scenario: Scenario;
  readonly facts: WorkerFacts;
  readonly tools: ReadonlySet<string>;
}

/**
 * The worker's answer to colony's reminders, added to what it does anyway: after a reflection
 * reminder a sentence on where it stands against the task, after a scratchpad reminder a
 * write_scratchpad call (first, so it runs before a handoff ends the agent) saying what is
 * done and what is next.
 */
export function answerReminders(planned: PlannedTurn, context: ReminderContext): PlannedTurn {
  const { conversation, scenario, facts, tools } = context;
  const progress = progressOf(scenario, facts);
  const text = conversation.reminders.reflection
    ? `Checked my progress against the task: ${progress}; the plan still holds. ${planned.text}`
    : planned.text;
  const failures = facts.stepFailures.get(TOOL_NAMES.writeScratchpad)?.count ?? 0;
  const rewrite =
    conversation.reminders.scratchpad &&
    tools.has(TOOL_NAMES.writeScratchpad) &&
    failures < SCRATCHPAD_FAILURES_TOLERATED &&
    !planned.calls.some((call) => call.name === TOOL_NAMES.writeScratchpad);
  if (!rewrite) return { text, calls: planned.calls };
  const modules = scenario.modules.map((module) => `${module.path} (${module.exports.map((fn) => fn.name).join(', ')})`);
  const content = [`Task: build ${modules.join(', ')}.`, `Done: ${progress}.`, `Next: ${planned.text}`].join('\n');
  const scratchpad: WorkerCall = { name: TOOL_NAMES.writeScratchpad, input: { content } };
  return { text, calls: [scratchpad, ...planned.calls] };
}

/** `1 of 2 modules written, 1 re-exported from src/index.js, the last test run passed, not merged yet`. */
export function progressOf(scenario: Scenario, facts: WorkerFacts): string {
  const total = scenario.modules.length;
  const written = scenario.modules.filter((module) => facts.lastWrites.has(module.path)).length;
  const index = scenario.project.index;
  const registered = scenario.modules.filter((module) => facts.indexLinesSeen.has(indexLineFor(index, module.path))).length;
  const lastRun = facts.runs.at(-1);
  const tests = lastRun === undefined ? 'no test run yet' : `the last test run ${lastRun.passed ? 'passed' : 'failed'}`;
  const merged = facts.merges.some((merge) => merge.kind === 'merged' || merge.kind === 'nothing') ? 'merged into main' : 'not merged yet';
  return `${written} of ${total} module${total === 1 ? '' : 's'} written, ${registered} re-exported from ${index}, ${tests}, ${merged}`;
}
