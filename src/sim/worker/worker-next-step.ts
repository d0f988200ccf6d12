import { GREEN_FAILURES_HEADING, EVIDENCE_FIRST_OPENING, NOT_LANDED_OPENING, STRAY_NOTES_OPENING } from '../../protocol/message-openings.js';
import { resolveConflicts } from './merge-conflict-resolution.js';
import type { Scenario } from '../scenario/scenario.js';
import type { SpecModule } from '../../spec/colony-spec.js';
import { declareCommandFor, indexLineFor, installCommandFor, renderModuleSource, renderModuleTest, testPathFor } from '../scenario/module-render.js';
import { seededRoll } from '../seeded-roll.js';
import type { SimOptions } from '../sim-options.js';
import { carriesSkipTestsLine } from '../reading/skip-tests-protocol.js';
import { failureName } from '../reading/command-output.js';
import type { WorkerConversation } from './worker-conversation.js';
import type { MergeAttempt, WorkerFacts } from './worker-facts.js';
import { readAfter, writtenAfter } from './worker-facts.js';
import {
  blockedHandoff,
  budgetStoppedHandoff,
  doneHandoff,
  failingElsewhereHandoff,
  liedHandoff,
  missingPrerequisitesHandoff,
  skippedTestsHandoff,
  stepFailedHandoff,
  testsFailedHandoff,
} from './worker-handoff.js';
import { answerReminders } from './worker-reminders.js';
import { handsOffUnmerged, notesContent, NOTES_FILE, writesNotes } from './worker-habits.js';
import { restoreOthersTests, skipOthersTests } from './others-tests-habit.js';
import type { HandoffInput, WorkerCall } from './worker-tool-calls.js';
import { stepKeyOf } from './worker-tool-calls.js';
import type { PlannedTurn, StepContext } from './types.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';

/** colony appends this heading to a retried task's brief, above what earlier attempts handed off. */
const EARLIER_ATTEMPTS_HEADING = '## Earlier attempts';

/** A step that keeps failing with tool errors is given up after this many. */
const MAX_STEP_FAILURES = 3;
/** Failing test runs (first attempt plus fixes) before the sim stops trying. */
const MAX_FAILING_RUNS = 3;
/** Merge conflicts before the sim stops trying to merge. */
const MAX_CONFLICTS = 4;

const REQUIRED_TOOLS = [TOOL_NAMES.readFile, TOOL_NAMES.writeFile, TOOL_NAMES.runCommand];

/**
 * The worker's next step, decided only from its conversation: what has succeeded so far
 * says where it is, and it does whatever comes next. It answers reminders as it goes (see
 * worker-reminders.ts), and a done handoff refused for want of evidence is made again with it.
 */
export function planWorkerTurn(conversation: WorkerConversation, toolNames: readonly string[], options: SimOptions): PlannedTurn {
  const tools = new Set(toolNames);
  if (!tools.has(TOOL_NAMES.submitHandoff)) {
    return { text: 'I have no submit_handoff tool to report on this task with, so I cannot work on it.', calls: [] };
  }
  const parsed = conversation.scenario;
  if (!parsed.ok || conversation.facts === null) {
    const error = parsed.ok ? 'The task could not be read.' : parsed.error;
    return handoff('I cannot tell what to build from this task, so I am handing it back.', blockedHandoff(error));
  }
  const missing = REQUIRED_TOOLS.filter((tool) => !tools.has(tool));
  if (missing.length > 0) {
    return handoff('I am missing tools this task needs.', {
      status: 'blocked',
      summary: `I cannot build and test the modules without the ${missing.join(', ')} tool${missing.length === 1 ? '' : 's'}. I changed nothing.`,
      feedback: [`Give workers the ${missing.join(', ')} tool${missing.length === 1 ? '' : 's'}.`],
    });
  }
  const { scenario } = parsed;
  const facts = conversation.facts;
  const next = nextStep({ scenario, facts, taskText: conversation.taskText, options, tools, mainFailing: conversation.mainFailing });
  let planned = withEvidence(guardRepeatedFailures(next, facts), facts, skipsTests(conversation.taskText));
  // Told this is its last call, it hands off now with what it has, unless it was about to anyway.
  if (conversation.budgetUsedUp && !planned.calls.some((call) => call.name === TOOL_NAMES.submitHandoff)) {
    planned = handoff('The budget is used up, so I am handing off what I have.', budgetStoppedHandoff(scenario, facts, planned.text));
  }
  return answerReminders(planned, { conversation, scenario, facts, tools });
}

function handoff(text: string, input: HandoffInput): PlannedTurn {
  return { text, calls: [{ name: TOOL_NAMES.submitHandoff, input }] };
}

function guardRepeatedFailures(planned: PlannedTurn, facts: WorkerFacts): PlannedTurn {
  for (const call of planned.calls) {
    const failed = facts.stepFailures.get(stepKeyOf(call));
    if (failed === undefined || failed.count < MAX_STEP_FAILURES) continue;
    if (call.name === TOOL_NAMES.submitHandoff) {
      return { text: `I could not submit my handoff: ${failed.lastError.split('\n')[0] ?? ''}`, calls: [] };
    }
    return handoff('This step keeps failing, so I am stopping.', stepFailedHandoff(stepKeyOf(call), failed.count, failed.lastError, facts));
  }
  return planned;
}

/**
 * After colony refused a done handoff for want of evidence, the sim says so and submits again:
 * its done handoff always carries the command it ran and the tail of its passing output, or,
 * when it merged untested as its brief said, the same honest word that it did not run them.
 */
function withEvidence(planned: PlannedTurn, facts: WorkerFacts, skippedTests: boolean): PlannedTurn {
  const refused = facts.stepFailures.get(TOOL_NAMES.submitHandoff)?.lastError.startsWith(EVIDENCE_FIRST_OPENING) ?? false;
  const [call] = planned.calls;
  if (!refused || call?.name !== TOOL_NAMES.submitHandoff || call.input.status !== 'done') return planned;
  const text = skippedTests
    ? 'colony asked for evidence first: submitting again with the same evidence, that I did not run the tests because my brief said to merge without them.'
    : 'colony asked for evidence first: submitting again with the command I ran and the tail of its output.';
  return { text, calls: planned.calls };
}

/**
 * Whether the worker merges without running the tests: its brief says so (SKIP_TESTS_LINE), and
 * it is a first attempt, not a retry (colony's `## Earlier attempts`) nor a fix (a brief saying
 * what fails on main), both of which are about tests that failed.
 */
export function skipsTests(taskText: string): boolean {
  if (!carriesSkipTestsLine(taskText) || taskText.includes(EARLIER_ATTEMPTS_HEADING)) return false;
  return !taskText.split('\n').some((line) => line.trim() === GREEN_FAILURES_HEADING);
}

function nextStep(context: StepContext): PlannedTurn {
  const { scenario, facts, tools } = context;
  const index = scenario.project.index;
  const command = scenario.project.test;

  if (tools.has(TOOL_NAMES.listDir) && !facts.listed) {
    return { text: 'Let me look at the repository first.', calls: [{ name: TOOL_NAMES.listDir, input: { path: '.' } }] };
  }
  if (facts.index.state === 'unread') {
    return { text: `Reading ${index} to see what the project exports so far.`, calls: [{ name: TOOL_NAMES.readFile, input: { path: index } }] };
  }

  const prerequisites = prerequisiteStep(context);
  if (prerequisites !== null) return prerequisites;

  for (const module of scenario.modules) {
    const step = moduleStep(context, module);
    if (step !== null) return step;
  }

  const lastMerge = facts.merges.at(-1);
  if (lastMerge?.kind === 'conflict') {
    for (const file of lastMerge.files) {
      if (writtenAfter(facts, file, lastMerge.position)) continue;
      const read = readAfter(facts, file, lastMerge.position);
      if (read === null || (read.hasMarkers && read.content === null)) {
        return {
          text: `merge_to_main found conflicts in ${lastMerge.files.join(', ')}. Reading ${file} to resolve them.`,
          calls: [{ name: TOOL_NAMES.readFile, input: { path: file } }],
        };
      }
      if (!read.hasMarkers || read.content === null) continue;
      const how = read.strategy === 'union-of-lines' ? "keeping both sides' lines, main's first" : 'keeping my side';
      return {
        text: `Resolving the conflict in ${file} by ${how}.`,
        calls: [{ name: TOOL_NAMES.writeFile, input: { path: file, content: resolveConflicts(read.content, read.strategy) } }],
      };
    }
  }

  if (skipsTests(context.taskText)) {
    const why = `My brief says to merge without running the tests, so I did not run \`${command}\`.`;
    return mergeThenHandOff(context, why, (merge) => skippedTestsHandoff({ scenario, facts, merge }));
  }

  const lastRun = facts.runs.at(-1);
  if (lastRun === undefined || lastRun.position < facts.lastChange) {
    return { text: `Running the project's tests: ${command}`, calls: [{ name: TOOL_NAMES.runCommand, input: { command } }] };
  }
  if (!lastRun.passed) {
    const failingRuns = facts.runs.filter((run) => !run.passed).length;
    const wrong = scenario.modules.filter((module) => facts.moduleWrites.get(module.path)?.lastCorrect !== true);
    if (liesAboutTests(context, wrong.length)) {
      return mergeThenHandOff(context, 'The tests fail, but I am merging anyway.', (merge) => liedHandoff({ scenario, facts, merge }));
    }
    // colony said main fails already and the output named no failure it could read (a long
    // output cut short): its own modules are right, so what fails is main's, as colony said.
    const told = wrong.length === 0 && lastRun.failing.length === 0 ? (context.mainFailing ?? []).map(failureName) : [];
    const elsewhere = failingElsewhere(scenario, told.length > 0 ? told : lastRun.failing);
    if (wrong.length === 0 && elsewhere.length > 0) {
      const habit = skipOthersTests(context, lastRun, elsewhere);
      if (habit !== null) return habit;
      // Its own work is right and tested; what fails is other modules' on main, outside its task.
      const why = `My modules' tests pass; what fails is outside my task (${elsewhere.slice(0, 3).join('; ')}).`;
      return mergeThenHandOff(context, why, (merge) => failingElsewhereHandoff({ scenario, facts, run: lastRun, merge, failing: elsewhere }));
    }
    if (wrong.length === 0 || failingRuns >= MAX_FAILING_RUNS) {
      return handoff('The tests still fail and I cannot fix it, so I am reporting the failure.', testsFailedHandoff(scenario, facts, lastRun));
    }
    const failing = lastRun.failing.filter((name) => !/\.test\.[cm]?js$/.test(name));
    const what = failing.length > 0 ? ` (${failing.slice(0, 3).join('; ')})` : '';
    return {
      text: `The tests fail${what}. My ${wrong.map((module) => module.path).join(', ')} answers a case wrongly; rewriting it.`,
      calls: wrong.map((module) => ({
        name: TOOL_NAMES.writeFile,
        input: { path: module.path, content: renderModuleSource(module, { buggy: false }) },
      })),
    };
  }

  return mergeThenHandOff(context, 'The tests pass.', (merge) => doneHandoff({ scenario, facts, passingRun: lastRun, merge }));
}

/**
 * Lands the work (again, after a conflict was resolved and the tests ran) and then hands off
 * with `handoffFor` the merge that landed it (null without a merge tool).
 */
function mergeThenHandOff(context: StepContext, why: string, handoffFor: (merge: MergeAttempt | null) => HandoffInput): PlannedTurn {
  const { scenario, facts, tools } = context;
  const lastMerge = facts.merges.at(-1);
  if (!tools.has(TOOL_NAMES.mergeToMain)) return handoff(`${why} I have no merge tool, so I am handing off.`, handoffFor(null));
  // The `unmerged` habit: done before merging, until colony says the work is not landed.
  const refusedUnlanded = facts.stepFailures.get(TOOL_NAMES.submitHandoff)?.lastError.startsWith(NOT_LANDED_OPENING) ?? false;
  if (lastMerge === undefined && !refusedUnlanded && handsOffUnmerged(context.options, context.taskText)) return handoff(`${why} Handing off.`, handoffFor(null));
  if (lastMerge !== undefined && (lastMerge.kind === 'merged' || lastMerge.kind === 'nothing')) {
    return handoff('Merged. Handing off.', handoffFor(lastMerge));
  }
  const conflicts = facts.merges.filter((attempt) => attempt.kind === 'conflict').length;
  if (conflicts >= MAX_CONFLICTS) {
    return handoff('Merging keeps conflicting, so I am stopping.', stepFailedHandoff(TOOL_NAMES.mergeToMain, conflicts, lastMerge?.content ?? '', facts));
  }
  const message = `Add ${scenario.modules.map((module) => module.path).join(', ')} (${scenario.modules
    .flatMap((module) => module.exports.map((fn) => fn.name))
    .join(', ')}) with tests`;
  const merge: WorkerCall = { name: TOOL_NAMES.mergeToMain, input: { message } };
  // The `notes` habit: a summary written into the repository with the first merge; told it is
  // notes rather than the project's, the worker deletes it and merges again.
  if (lastMerge?.kind === 'error' && lastMerge.content.startsWith(STRAY_NOTES_OPENING) && tools.has(TOOL_NAMES.runCommand)) {
    const remove: WorkerCall = { name: TOOL_NAMES.runCommand, input: { command: `rm -f ${NOTES_FILE}` } };
    return { text: `colony says ${NOTES_FILE} is notes, not the project's: deleting it (what it says is in my handoff) and merging again.`, calls: [remove, merge] };
  }
  const restore = restoreOthersTests(scenario, facts, tools);
  if (restore !== null) return restore;
  if (lastMerge === undefined && writesNotes(context.options, context.taskText)) {
    const write: WorkerCall = { name: TOOL_NAMES.writeFile, input: { path: NOTES_FILE, content: notesContent(scenario) } };
    return { text: `${why} Writing a summary of my work to ${NOTES_FILE}, then merging into main.`, calls: [write, merge] };
  }
  return { text: `${why} Merging into main.`, calls: [merge] };
}

/**
 * The `lie` fault: its first attempt failed its tests, and rather than fix it the worker merges
 * and claims done. Rolled once per task; a retried task, told what went wrong before, never lies.
 */
function liesAboutTests(context: StepContext, wrongModules: number): boolean {
  const { options, facts, taskText } = context;
  if (options.lie <= 0 || wrongModules === 0 || facts.runs[0]?.passed !== false) return false;
  if (taskText.includes(EARLIER_ATTEMPTS_HEADING)) return false;
  return seededRoll(options.seed, taskText, 0, 'lie') < options.lie;
}

/** Failing tests that belong to none of the task's modules (by function name or test file); empty when any is its own. */
function failingElsewhere(scenario: Scenario, failing: readonly string[]): string[] {
  const own = (name: string): boolean =>
    scenario.modules.some(
      (module) => name.includes(testPathFor(module.path)) || module.exports.some((fn) => name.startsWith(`${fn.name}(`)),
    );
  return failing.some(own) ? [] : [...failing];
}

/**
 * Before building, whether the modules its modules import (those another task builds) are in the
 * workspace: each read once; one that is not there ends the task blocked, naming it, rather than
 * written or stubbed here (the brief says so). Null when all are there, or it uses none.
 */
function prerequisiteStep(context: StepContext): PlannedTurn | null {
  const { scenario, facts } = context;
  const own = new Set(scenario.modules.map((module) => module.path));
  const needed = scenario.modules.flatMap((module) => (module.uses ?? []).filter((used) => !own.has(used)).map((uses) => ({ module: module.path, uses })));
  const unread = needed.filter(({ uses }) => !facts.lastReads.has(uses) && !facts.stepFailures.has(`${TOOL_NAMES.readFile} ${uses}`));
  if (unread.length > 0) {
    const paths = [...new Set(unread.map(({ uses }) => uses))];
    return { text: `My modules import ${paths.join(', ')}: checking ${paths.length === 1 ? 'it is' : 'they are'} on main before I start.`, calls: paths.map((path) => ({ name: TOOL_NAMES.readFile, input: { path } })) };
  }
  const missing = needed.filter(({ uses }) => !facts.lastReads.has(uses));
  if (missing.length === 0 || facts.merges.length > 0) return null;
  return handoff('What my modules import is not on main yet, so I am handing this task back.', missingPrerequisitesHandoff(missing));
}

/** The next step for one module, or null when it is written, tested and registered. */
function moduleStep(context: StepContext, module: SpecModule): PlannedTurn | null {
  const { scenario, facts, tools } = context;
  const testPath = testPathFor(module.path);
  const tested = facts.lastWrites.has(testPath);
  const install = installCommandFor(module);
  const declare = declareCommandFor(module);
  if (install !== null && declare !== null && !facts.installed.has(install) && !facts.installed.has(declare)) {
    const names = Object.keys(module.packages ?? {}).join(', ');
    const them = names.includes(',') ? 'them' : 'it';
    if (facts.offline.has(install)) {
      return { text: `npm cannot reach the registry from here: declaring ${names} in package.json for the workspace's setup to install.`, calls: [{ name: TOOL_NAMES.runCommand, input: { command: declare } }] };
    }
    return { text: `${module.path} imports ${names}: adding ${them} to the project first.`, calls: [{ name: TOOL_NAMES.runCommand, input: { command: install } }] };
  }
  if (!facts.lastWrites.has(module.path)) {
    // Rolled per module, not per turn, so a retried write keeps the same first attempt.
    const buggy = seededRoll(context.options.seed, `${context.taskText}\n${module.path}`, 0, 'bug') < context.options.bug;
    const calls: WorkerCall[] = [{ name: TOOL_NAMES.writeFile, input: { path: module.path, content: renderModuleSource(module, { buggy }) } }];
    if (!tested) calls.push({ name: TOOL_NAMES.writeFile, input: { path: testPath, content: renderModuleTest(module) } });
    return { text: `Writing ${module.path}${tested ? '' : ' and its test'}.`, calls };
  }
  if (!tested) {
    return { text: `Writing the test for ${module.path}.`, calls: [{ name: TOOL_NAMES.writeFile, input: { path: testPath, content: renderModuleTest(module) } }] };
  }
  const index = scenario.project.index;
  const line = indexLineFor(index, module.path);
  if (facts.indexLinesSeen.has(line)) return null;
  const text = `Re-exporting ${module.path} from ${index}.`;
  const knowledge = facts.index;
  if (knowledge.state === 'unread' || knowledge.state === 'stale') {
    return { text: `Re-reading ${index} before I change it.`, calls: [{ name: TOOL_NAMES.readFile, input: { path: index } }] };
  }
  if (knowledge.state === 'missing' || knowledge.content.trim().length === 0) {
    return { text, calls: [{ name: TOOL_NAMES.writeFile, input: { path: index, content: `${line}\n` } }] };
  }
  if (!tools.has(TOOL_NAMES.editFile)) {
    const separator = knowledge.content.endsWith('\n') ? '' : '\n';
    return { text, calls: [{ name: TOOL_NAMES.writeFile, input: { path: index, content: `${knowledge.content}${separator}${line}\n` } }] };
  }
  const anchor = uniqueLastLines(knowledge.content);
  return {
    text,
    calls: [{ name: TOOL_NAMES.editFile, input: { path: index, old_string: anchor, new_string: `${anchor}\n${line}` } }],
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
