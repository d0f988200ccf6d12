import type { ConversationParts } from '../conversation-parts.js';
import type { SimOptions } from '../sim-options.js';
import { readWorkerParts } from './worker-conversation.js';
import { planWorkerTurn } from './worker-next-step.js';
import { progressOf } from './worker-reminders.js';
import type { WorkerCarried } from './worker-state.js';
import { encodeFacts } from './worker-state.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';

/** The tools a worker has, for naming its next step when a compaction request offers none. */
const WORKER_TOOLS = [TOOL_NAMES.readFile, TOOL_NAMES.writeFile, TOOL_NAMES.editFile, TOOL_NAMES.listDir, TOOL_NAMES.runCommand, TOOL_NAMES.mergeToMain, TOOL_NAMES.submitHandoff];

/**
 * The sim worker's summary of a conversation: a few lines a person can read (the task, what
 * is done, what is in flight, the open threads, the next step) and the state it goes on from
 * (worker-state.ts).
 */
export function workerSummary(parts: ConversationParts, options: SimOptions, unfinished: boolean): { lines: string[]; state: WorkerCarried } {
  const conversation = readWorkerParts(parts);
  const { scenario, facts } = conversation;
  const state: WorkerCarried = {
    role: 'worker',
    turn: conversation.turn,
    abandoned: conversation.abandoned,
    budgetUsedUp: conversation.budgetUsedUp,
    reminders: conversation.reminders,
    facts: scenario.ok && facts !== null ? encodeFacts(facts, scenario.scenario) : null,
  };
  if (!scenario.ok || facts === null) {
    return { lines: ['Task: the first message has no colony-spec I can build from.', 'Next step: hand the task back as blocked.'], state };
  }
  const modules = scenario.scenario.modules.map((module) => `${module.path} (${module.exports.map((fn) => fn.name).join(', ')})`);
  const quiet = { ...conversation, reminders: { scratchpad: false, reflection: false } };
  const next = conversation.abandoned ? 'none: I gave up on this task.' : planWorkerTurn(quiet, WORKER_TOOLS, options).text;
  const threads: string[] = [];
  const lastRun = facts.runs.at(-1);
  if (lastRun !== undefined && !lastRun.passed) threads.push(`the last test run failed (${lastRun.failing.slice(0, 3).join('; ') || lastRun.statusLine})`);
  const lastMerge = facts.merges.at(-1);
  if (lastMerge?.kind === 'conflict') threads.push(`merge_to_main left conflicts in ${lastMerge.files.join(', ')}`);
  for (const [step, failure] of facts.stepFailures) threads.push(`${step} failed ${failure.count} time${failure.count === 1 ? '' : 's'}`);
  const lines = [
    `Task: build ${modules.join(', ')}, as the colony-spec in the first message lists them.`,
    `Done: ${progressOf(scenario.scenario, facts)}${facts.touched.length > 0 ? `; files changed: ${facts.touched.join(', ')}` : ''}.`,
    `In flight: ${unfinished ? 'the calls of my last answer, whose results are still to come' : 'nothing'}.`,
    `Open threads: ${threads.length === 0 ? 'none' : threads.join('; ')}.`,
    `Next step: ${next}`,
  ];
  return { lines, state };
}
