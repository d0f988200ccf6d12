import { tailOf } from '../reading/command-output.js';
import type { Scenario } from '../scenario/scenario.js';
import { SIM_BROKE_ON_PURPOSE_NOTE } from '../reading/skip-tests-protocol.js';
import type { MergeAttempt, TestRun, WorkerFacts } from './worker-facts.js';
import { readAfter } from './worker-facts.js';
import type { HandoffInput } from './worker-tool-calls.js';

/** The handoffs a sim worker writes, with their content drawn from what its calls add up to. */

export function blockedHandoff(reason: string): HandoffInput {
  return {
    status: 'blocked',
    summary: 'This task has no usable colony-spec block, so I cannot tell what to build. I changed nothing.',
    evidence: reason,
    notes: ['I only build what a colony-spec block describes: the project (test command, index file) and the modules with their functions and cases.'],
    feedback: ['Give the task a ```colony-spec block holding JSON with "project" and "modules", as shown in the evidence.'],
  };
}

/**
 * Modules the task's modules import are not on main: built nothing, as the protocol says, and
 * says which, for the planner to publish the task again once their tasks landed.
 */
export function missingPrerequisitesHandoff(missing: readonly { readonly module: string; readonly uses: string }[]): HandoffInput {
  const named = missing.map(({ module, uses }) => `${module} imports ${uses}`);
  const absent = [...new Set(missing.map(({ uses }) => uses))];
  return {
    status: 'blocked',
    summary: `What this task builds imports ${absent.join(', ')}, which ${absent.length === 1 ? 'is' : 'are'} not on main yet: another task builds ${absent.length === 1 ? 'it' : 'them'}. I built nothing and did not stub ${absent.length === 1 ? 'it' : 'them'}.`,
    evidence: `read_file found no ${absent.join(', ')} in my workspace, made from main's latest commit.`,
    notes: named.map((line) => `${line}.`),
    follow_ups: [`Publish this task again once the task${absent.length === 1 ? '' : 's'} building ${absent.join(', ')} landed.`],
  };
}

export function stepFailedHandoff(step: string, count: number, lastError: string, facts: WorkerFacts): HandoffInput {
  return {
    status: 'failed',
    summary: `I could not finish: ${step} failed ${count} times in a row, so I stopped retrying.`,
    evidence: tailOf(lastError),
    notes: filesNote(facts),
    concerns: [`The last error for ${step} was: ${firstLine(lastError)}`],
  };
}

/** The evidence of a test run: the command, its status line and the tail of its output. */
export function runEvidence(command: string, run: TestRun): string {
  return `$ ${command}\n${run.statusLine}\n${run.tail}`;
}

export function testsFailedHandoff(scenario: Scenario, facts: WorkerFacts, run: TestRun): HandoffInput {
  const command = scenario.project.test;
  const runs = facts.runs.filter((each) => !each.passed).length;
  return {
    status: 'failed',
    summary: `\`${command}\` still fails after ${runs} failing run${runs === 1 ? '' : 's'}, and nothing I wrote explains it, so I did not merge.`,
    evidence: runEvidence(command, run),
    notes: [...filesNote(facts), ...fixNotes(scenario, facts)],
    concerns: run.failing.length > 0 ? [`Failing tests: ${run.failing.slice(0, 8).join('; ')}`] : [`The test command ended with: ${run.statusLine}`],
    follow_ups: ['Find out why the failing tests above fail on this branch; they are not fixed by rewriting the modules of this task.'],
  };
}

/** What a worker hands off when told its budget is used up before it finished: what is done, what was next. */
export function budgetStoppedHandoff(scenario: Scenario, facts: WorkerFacts, next: string): HandoffInput {
  const files = facts.touched;
  const landed = facts.merges.some((attempt) => attempt.kind === 'merged');
  const lastRun = facts.runs.at(-1);
  const tests = lastRun === undefined ? 'I had not run the tests yet' : lastRun.passed ? 'the tests passed on my last run' : 'the tests failed on my last run';
  return {
    status: files.length === 0 ? 'blocked' : 'partial',
    summary:
      `The budget was used up before I finished ${scenario.modules.map((module) => module.path).join(', ')}: ` +
      `${files.length === 0 ? 'I changed nothing' : `I wrote ${files.join(', ')}`}, ${tests}, and ${landed ? 'my work landed on main' : 'nothing of it landed on main'}.`,
    notes: filesNote(facts),
    follow_ups: [`What I was about to do next: ${next}`],
  };
}

export interface DoneFacts {
  readonly scenario: Scenario;
  readonly facts: WorkerFacts;
  readonly passingRun: TestRun;
  /** The merge that landed, or null when no merge_to_main tool was available. */
  readonly merge: MergeAttempt | null;
}

/** The done handoff: always with evidence, the command and the tail of its passing output. */
export function doneHandoff(done: DoneFacts): HandoffInput {
  const { scenario, facts, passingRun, merge } = done;
  const command = scenario.project.test;
  const functions = scenario.modules.flatMap((module) => module.exports.map((fn) => fn.name));
  const cases = scenario.modules.reduce((sum, module) => sum + module.exports.reduce((count, fn) => count + fn.cases.length, 0), 0);
  const passed = passingRun.passCount;
  const outcome =
    merge === null
      ? 'it is committed in my workspace but not merged, because I had no merge_to_main tool'
      : merge.kind === 'nothing'
        ? 'main already had all of it (merge_to_main: nothing to merge)'
        : 'it is merged into main';
  const summary =
    `Built ${functions.join(', ')} in ${scenario.modules.map((module) => module.path).join(', ')}, ` +
    `with a test for each of the ${cases} listed cases, re-exported from ${scenario.project.index}. ` +
    `\`${command}\` passes${passed === null ? '' : ` (${passed} tests)`} and ${outcome}.`;
  const notes = [...filesNote(facts), ...fixNotes(scenario, facts), ...conflictNotes(facts)];
  if (merge !== null) notes.push(`merge_to_main: ${firstLine(merge.content)}`);
  return {
    status: 'done',
    summary,
    evidence: runEvidence(command, passingRun),
    notes,
    deviations: merge === null ? ['Not merged into main: the merge_to_main tool was not offered to me.'] : [],
  };
}

/**
 * The `lie` fault's handoff: `done`, with evidence of a passing run that never happened. Its
 * first attempt failed its tests and it merged without fixing them; nothing here says so.
 */
export function liedHandoff(done: Omit<DoneFacts, 'passingRun'>): HandoffInput {
  const cases = done.scenario.modules.reduce((sum, module) => sum + module.exports.reduce((count, fn) => count + fn.cases.length, 0), 0);
  const madeUp: TestRun = {
    position: -1,
    passed: true,
    statusLine: 'exit code: 0',
    failing: [],
    passCount: cases,
    tail: [`ℹ tests ${cases}`, `ℹ pass ${cases}`, 'ℹ fail 0'].join('\n'),
  };
  return doneHandoff({ ...done, passingRun: madeUp });
}

export interface SkippedTestsFacts {
  readonly scenario: Scenario;
  readonly facts: WorkerFacts;
  /** The merge that landed, or null when no merge_to_main tool was available. */
  readonly merge: MergeAttempt | null;
}

/**
 * The handoff of a worker told to merge without running the tests: `done`, saying honestly that
 * it did not run them, and naming each module it knew it wrote wrong (SIM_BROKE_ON_PURPOSE_NOTE):
 * the sim's own record of what main's green check should find.
 */
export function skippedTestsHandoff(skipped: SkippedTestsFacts): HandoffInput {
  const { scenario, facts, merge } = skipped;
  const command = scenario.project.test;
  const functions = scenario.modules.flatMap((module) => module.exports.map((fn) => fn.name));
  const outcome = merge === null ? 'it is not merged, because I had no merge_to_main tool' : merge.kind === 'nothing' ? 'main already had all of it' : 'it is merged into main';
  const wrong = scenario.modules.filter((module) => facts.moduleWrites.get(module.path)?.lastCorrect === false);
  const notes = [
    ...filesNote(facts),
    ...wrong.map((module) => `${SIM_BROKE_ON_PURPOSE_NOTE}${module.path}`),
    ...conflictNotes(facts, { retested: false }),
  ];
  if (merge !== null) notes.push(`merge_to_main: ${firstLine(merge.content)}`);
  return {
    status: 'done',
    summary:
      `Built ${functions.join(', ')} in ${scenario.modules.map((module) => module.path).join(', ')} with tests, ` +
      `re-exported from ${scenario.project.index}, and ${outcome}. I did not run \`${command}\`: my brief said to merge without running the tests.`,
    evidence: `I did not run \`${command}\`: my brief said to merge without running the tests, as main's green check tests the work after me.`,
    notes,
    concerns: [`Untested: \`${command}\` never ran on this work before it landed.`],
  };
}

export interface FailingElsewhereFacts {
  readonly scenario: Scenario;
  readonly facts: WorkerFacts;
  readonly run: TestRun;
  readonly merge: MergeAttempt | null;
  /** The failing tests, none of them this task's. */
  readonly failing: readonly string[];
}

/** Its own modules are right and their tests pass, but tests outside the task fail on main: done, saying so. */
export function failingElsewhereHandoff(elsewhere: FailingElsewhereFacts): HandoffInput {
  const { scenario, facts, run, merge, failing } = elsewhere;
  const command = scenario.project.test;
  const outcome = merge === null ? 'it is not merged, because I had no merge_to_main tool' : merge.kind === 'nothing' ? 'main already had all of it' : 'it is merged into main';
  return {
    status: 'done',
    summary:
      `Built ${scenario.modules.map((module) => module.path).join(', ')} with its tests, re-exported from ${scenario.project.index}, and ${outcome}. ` +
      `Its own tests pass, but \`${command}\` fails in tests outside this task, which I left alone.`,
    evidence: runEvidence(command, run),
    notes: [...filesNote(facts), ...fixNotes(scenario, facts), ...conflictNotes(facts)],
    concerns: [`Tests outside this task fail on main: ${failing.slice(0, 8).join('; ')}`],
    follow_ups: ['Fix the failing tests above: they belong to other modules, not to this task.'],
  };
}

function filesNote(facts: WorkerFacts): string[] {
  return facts.touched.length === 0 ? [] : [`Files I changed: ${facts.touched.join(', ')}.`];
}

/** A note for every module whose first version was wrong and had to be rewritten. */
function fixNotes(scenario: Scenario, facts: WorkerFacts): string[] {
  const notes: string[] = [];
  const failedRuns = facts.runs.filter((run) => !run.passed);
  for (const module of scenario.modules) {
    const writes = facts.moduleWrites.get(module.path);
    if (writes === undefined || writes.firstCorrect || !writes.everCorrect) continue;
    const caught = failedRuns.find((run) => run.position > writes.firstPosition);
    const own = module.exports.map((fn) => `${fn.name}(`);
    const names = caught === undefined ? [] : caught.failing.filter((name) => own.some((prefix) => name.startsWith(prefix)));
    const which = names.length > 0 ? `the test run failed on ${names.slice(0, 3).join('; ')}` : 'the test run failed';
    notes.push(
      `My first version of ${module.path} was wrong: it answered one of the listed cases incorrectly and ${which}. ` +
        'I rewrote the module to answer every case and the tests pass now.',
    );
  }
  return notes;
}

function conflictNotes(facts: WorkerFacts, { retested }: { readonly retested: boolean } = { retested: true }): string[] {
  const notes: string[] = [];
  for (const attempt of facts.merges) {
    if (attempt.kind !== 'conflict') continue;
    const how = attempt.files.map((file) => {
      const strategy = readAfter(facts, file, attempt.position)?.strategy ?? 'this-worker-side';
      return strategy === 'union-of-lines'
        ? `${file}: kept both sides' lines, main's first, without duplicates`
        : `${file}: kept my side`;
    });
    notes.push(`merge_to_main hit conflicts (${how.join('; ')}); I resolved them${retested ? ', re-ran the tests' : ''} and merged again.`);
  }
  return notes;
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
