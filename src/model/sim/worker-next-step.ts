import { failingTestNames } from './command-output.js';
import { hasConflictMarkers, resolveConflicts, strategyFor } from './merge-conflict-resolution.js';
import type { Scenario, ScenarioModule } from './scenario.js';
import { indexLineFor, parseScenario, renderModuleSource, renderModuleTest, testPathFor } from './scenario.js';
import { seededRoll } from './seeded-roll.js';
import type { SimOptions } from './sim-options.js';
import type { WorkerConversation } from './worker-conversation.js';
import {
  blockedHandoff,
  budgetStoppedHandoff,
  doneHandoff,
  failingElsewhereHandoff,
  liedHandoff,
  stepFailedHandoff,
  testsFailedHandoff,
} from './worker-handoff.js';
import type { IndexKnowledge, MergeAttempt, TestRun } from './worker-progress.js';
import {
  indexHasHad,
  indexKnowledge,
  lastChangePosition,
  lastRead,
  lastWrite,
  mergeAttempts,
  stepFailures,
  testRuns,
} from './worker-progress.js';
import type { HandoffInput, WorkerCall } from './worker-tool-calls.js';
import { stepKeyOf } from './worker-tool-calls.js';

/** What the sim means to say and do this turn, before any fault is applied. */
export interface PlannedTurn {
  readonly text: string;
  readonly calls: readonly WorkerCall[];
}

/** colony appends this heading to a retried task's brief, above what earlier attempts handed off. */
const EARLIER_ATTEMPTS_HEADING = '## Earlier attempts';

/** A step that keeps failing with tool errors is given up after this many. */
const MAX_STEP_FAILURES = 3;
/** Failing test runs (first attempt plus fixes) before the sim stops trying. */
const MAX_FAILING_RUNS = 3;
/** Merge conflicts before the sim stops trying to merge. */
const MAX_CONFLICTS = 4;

const REQUIRED_TOOLS = ['read_file', 'write_file', 'run_command'];

/**
 * The worker's next step, decided only from its conversation: what has succeeded so far
 * says where it is, and it does whatever comes next.
 */
export function planWorkerTurn(conversation: WorkerConversation, toolNames: readonly string[], options: SimOptions): PlannedTurn {
  const tools = new Set(toolNames);
  if (!tools.has('submit_handoff')) {
    return { text: 'I have no submit_handoff tool to report on this task with, so I cannot work on it.', calls: [] };
  }
  const parsed = parseScenario(conversation.taskText);
  if (!parsed.ok) return handoff('I cannot tell what to build from this task, so I am handing it back.', blockedHandoff(parsed.error));
  const missing = REQUIRED_TOOLS.filter((tool) => !tools.has(tool));
  if (missing.length > 0) {
    return handoff('I am missing tools this task needs.', {
      status: 'blocked',
      summary: `I cannot build and test the modules without the ${missing.join(', ')} tool${missing.length === 1 ? '' : 's'}. I changed nothing.`,
      feedback: [`Give workers the ${missing.join(', ')} tool${missing.length === 1 ? '' : 's'}.`],
    });
  }
  const planned = guardRepeatedFailures(nextStep(parsed.scenario, conversation, options, tools), conversation);
  // Told this is its last call, it hands off now with what it has, unless it was about to anyway.
  if (conversation.budgetUsedUp && !planned.calls.some((call) => call.name === 'submit_handoff')) {
    return handoff('The budget is used up, so I am handing off what I have.', budgetStoppedHandoff(parsed.scenario, conversation.actions, planned.text));
  }
  return planned;
}

function handoff(text: string, input: HandoffInput): PlannedTurn {
  return { text, calls: [{ name: 'submit_handoff', input }] };
}

function guardRepeatedFailures(planned: PlannedTurn, conversation: WorkerConversation): PlannedTurn {
  const failures = stepFailures(conversation.actions);
  for (const call of planned.calls) {
    const failed = failures.get(stepKeyOf(call));
    if (failed === undefined || failed.count < MAX_STEP_FAILURES) continue;
    if (call.name === 'submit_handoff') {
      return { text: `I could not submit my handoff: ${failed.lastError.split('\n')[0] ?? ''}`, calls: [] };
    }
    return handoff(
      'This step keeps failing, so I am stopping.',
      stepFailedHandoff(stepKeyOf(call), failed.count, failed.lastError, conversation.actions),
    );
  }
  return planned;
}

function nextStep(scenario: Scenario, conversation: WorkerConversation, options: SimOptions, tools: Set<string>): PlannedTurn {
  const { actions } = conversation;
  const index = scenario.project.index;
  const command = scenario.project.test;

  if (tools.has('list_dir') && !actions.some((action) => action.call?.name === 'list_dir' && action.result !== null)) {
    return { text: 'Let me look at the repository first.', calls: [{ name: 'list_dir', input: { path: '.' } }] };
  }
  const knowledge = indexKnowledge(actions, index);
  if (knowledge.state === 'unread') {
    return { text: `Reading ${index} to see what the project exports so far.`, calls: [{ name: 'read_file', input: { path: index } }] };
  }

  for (const module of scenario.modules) {
    const step = moduleStep(scenario, module, conversation, options, tools, knowledge);
    if (step !== null) return step;
  }

  const merges = mergeAttempts(actions);
  const lastMerge = merges.at(-1);
  if (lastMerge?.kind === 'conflict') {
    for (const file of lastMerge.files) {
      if (lastWrite(actions, file, lastMerge.position) !== null) continue;
      const read = lastRead(actions, file, lastMerge.position);
      if (read === null) {
        return {
          text: `merge_to_main found conflicts in ${lastMerge.files.join(', ')}. Reading ${file} to resolve them.`,
          calls: [{ name: 'read_file', input: { path: file } }],
        };
      }
      if (!hasConflictMarkers(read.content)) continue;
      const strategy = strategyFor(file, read.content, index);
      const how = strategy === 'union-of-lines' ? "keeping both sides' lines, main's first" : 'keeping my side';
      return {
        text: `Resolving the conflict in ${file} by ${how}.`,
        calls: [{ name: 'write_file', input: { path: file, content: resolveConflicts(read.content, strategy) } }],
      };
    }
  }

  const runs = testRuns(actions, command);
  const lastRun = runs.at(-1);
  if (lastRun === undefined || lastRun.position < lastChangePosition(actions)) {
    return { text: `Running the project's tests: ${command}`, calls: [{ name: 'run_command', input: { command } }] };
  }
  if (!lastRun.passed) {
    const failingRuns = runs.filter((run) => !run.passed).length;
    const wrong = scenario.modules.filter(
      (module) => lastWrite(actions, module.path)?.content !== renderModuleSource(module, { buggy: false }),
    );
    if (liesAboutTests(conversation, runs, wrong.length, options)) {
      return mergeThenHandOff(actions, tools, merges, scenario, 'The tests fail, but I am merging anyway.', (merge) => liedHandoff({ scenario, actions, merge }));
    }
    const elsewhere = failingElsewhere(scenario, lastRun);
    if (wrong.length === 0 && elsewhere.length > 0) {
      // Its own work is right and tested; what fails is other modules' on main, outside its task.
      const why = `My modules' tests pass; what fails is outside my task (${elsewhere.slice(0, 3).join('; ')}).`;
      return mergeThenHandOff(actions, tools, merges, scenario, why, (merge) => failingElsewhereHandoff({ scenario, actions, run: lastRun, merge, failing: elsewhere }));
    }
    if (wrong.length === 0 || failingRuns >= MAX_FAILING_RUNS) {
      return handoff('The tests still fail and I cannot fix it, so I am reporting the failure.', testsFailedHandoff(scenario, actions, lastRun));
    }
    const failing = failingTestNames(lastRun.report.output).filter((name) => !/\.test\.[cm]?js$/.test(name));
    const what = failing.length > 0 ? ` (${failing.slice(0, 3).join('; ')})` : '';
    return {
      text: `The tests fail${what}. My ${wrong.map((module) => module.path).join(', ')} answers a case wrongly; rewriting it.`,
      calls: wrong.map((module) => ({
        name: 'write_file' as const,
        input: { path: module.path, content: renderModuleSource(module, { buggy: false }) },
      })),
    };
  }

  return mergeThenHandOff(actions, tools, merges, scenario, 'The tests pass.', (merge) => doneHandoff({ scenario, actions, passingRun: lastRun, merge }));
}

/**
 * Lands the work (again, after a conflict was resolved and the tests ran) and then hands off
 * with `handoffFor` the merge that landed it (null without a merge tool).
 */
function mergeThenHandOff(
  actions: WorkerConversation['actions'],
  tools: Set<string>,
  merges: readonly MergeAttempt[],
  scenario: Scenario,
  why: string,
  handoffFor: (merge: MergeAttempt | null) => HandoffInput,
): PlannedTurn {
  const lastMerge = merges.at(-1);
  if (!tools.has('merge_to_main')) return handoff(`${why} I have no merge tool, so I am handing off.`, handoffFor(null));
  if (lastMerge !== undefined && (lastMerge.kind === 'merged' || lastMerge.kind === 'nothing')) {
    return handoff('Merged. Handing off.', handoffFor(lastMerge));
  }
  const conflicts = merges.filter((attempt) => attempt.kind === 'conflict').length;
  if (conflicts >= MAX_CONFLICTS) {
    return handoff(
      'Merging keeps conflicting, so I am stopping.',
      stepFailedHandoff('merge_to_main', conflicts, lastMerge?.content ?? '', actions),
    );
  }
  const message = `Add ${scenario.modules.map((module) => module.path).join(', ')} (${scenario.modules
    .flatMap((module) => module.exports.map((fn) => fn.name))
    .join(', ')}) with tests`;
  return { text: `${why} Merging into main.`, calls: [{ name: 'merge_to_main', input: { message } }] };
}

/**
 * The `lie` fault: its first attempt failed its tests, and rather than fix it the worker merges
 * and claims done. Rolled once per task; a retried task, told what went wrong before, never lies.
 */
function liesAboutTests(conversation: WorkerConversation, runs: readonly TestRun[], wrongModules: number, options: SimOptions): boolean {
  if (options.lie <= 0 || wrongModules === 0 || runs[0]?.passed !== false) return false;
  if (conversation.taskText.includes(EARLIER_ATTEMPTS_HEADING)) return false;
  return seededRoll(options.seed, conversation.taskText, 0, 'lie') < options.lie;
}

/** Failing tests of the run that belong to none of the task's modules (by function name or test file); empty when any is its own. */
function failingElsewhere(scenario: Scenario, run: TestRun): string[] {
  const failing = failingTestNames(run.report.output);
  const own = (name: string): boolean =>
    scenario.modules.some(
      (module) => name.includes(testPathFor(module.path)) || module.exports.some((fn) => name.startsWith(`${fn.name}(`)),
    );
  return failing.some(own) ? [] : failing;
}

/** The next step for one module, or null when it is written, tested and registered. */
function moduleStep(
  scenario: Scenario,
  module: ScenarioModule,
  conversation: WorkerConversation,
  options: SimOptions,
  tools: Set<string>,
  knowledge: IndexKnowledge,
): PlannedTurn | null {
  const { actions } = conversation;
  const testPath = testPathFor(module.path);
  const tested = lastWrite(actions, testPath) !== null;
  if (lastWrite(actions, module.path) === null) {
    // Rolled per module, not per turn, so a retried write keeps the same first attempt.
    const buggy = seededRoll(options.seed, `${conversation.taskText}\n${module.path}`, 0, 'bug') < options.bug;
    const calls: WorkerCall[] = [{ name: 'write_file', input: { path: module.path, content: renderModuleSource(module, { buggy }) } }];
    if (!tested) calls.push({ name: 'write_file', input: { path: testPath, content: renderModuleTest(module) } });
    return { text: `Writing ${module.path}${tested ? '' : ' and its test'}.`, calls };
  }
  if (!tested) {
    return { text: `Writing the test for ${module.path}.`, calls: [{ name: 'write_file', input: { path: testPath, content: renderModuleTest(module) } }] };
  }
  const index = scenario.project.index;
  const line = indexLineFor(index, module.path);
  if (indexHasHad(actions, index, line)) return null;
  const text = `Re-exporting ${module.path} from ${index}.`;
  if (knowledge.state === 'unread' || knowledge.state === 'stale') {
    return { text: `Re-reading ${index} before I change it.`, calls: [{ name: 'read_file', input: { path: index } }] };
  }
  if (knowledge.state === 'missing' || knowledge.content.trim().length === 0) {
    return { text, calls: [{ name: 'write_file', input: { path: index, content: `${line}\n` } }] };
  }
  if (!tools.has('edit_file')) {
    const separator = knowledge.content.endsWith('\n') ? '' : '\n';
    return { text, calls: [{ name: 'write_file', input: { path: index, content: `${knowledge.content}${separator}${line}\n` } }] };
  }
  const anchor = uniqueLastLines(knowledge.content);
  return {
    text,
    calls: [{ name: 'edit_file', input: { path: index, old_string: anchor, new_string: `${anchor}\n${line}` } }],
  };
}

/** The fewest last lines of `content` that occur in it only once: an anchor to append after. */
export function uniqueLastLines(content: string): string {
  const lines = content.replace(/\s+$/, '').split('\n');
  for (let count = 1; count <= lines.length; count += 1) {
    const anchor = lines.slice(-count).join('\n');
    if (content.split(anchor).length === 2) return anchor;
  }
  return lines.join('\n');
}
