import { OTHERS_TESTS_OPENING } from '../../protocol/message-openings.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';
import type { Scenario } from '../scenario/scenario.js';
import { testPathFor } from '../scenario/module-render.js';
import { seededRoll } from '../seeded-roll.js';
import type { SimOptions } from '../sim-options.js';
import type { PlannedTurn, StepContext } from './types.js';
import type { TestRun, WorkerFacts } from './worker-facts.js';
import { readAfter } from './worker-facts.js';
import type { WorkerCall } from './worker-tool-calls.js';
import { restoreCommandFor } from './worker-habits.js';

/**
 * The `testfix` habit of real models: a worker whose own work passes, but whose run shows another
 * module's test failing, "fixes" that test where it stands. It finds the test's file (`search`),
 * reads it and skips the failing tests there (`test(` becomes `test.skip(`), so the suite passes.
 * colony refuses that merge once (`Not merged (tests outside your task):`); the worker then puts
 * each file back as its workspace had it, as the refusal says, and merges its own work with the
 * failures named as not its own.
 */

/** Test files the habit skips tests in before it gives up on it: one round per file. */
const MAX_FILES_SKIPPED = 2;

/** Whether this task's worker skips other modules' failing tests (the `testfix` habit), rolled per task. */
export function fixesOthersTests(options: SimOptions, taskText: string): boolean {
  return options.testfix > 0 && seededRoll(options.seed, taskText, 0, 'testfix') < options.testfix;
}

/** The test files of the task's own modules. */
function ownTestPaths(scenario: Scenario): Set<string> {
  return new Set(scenario.modules.map((module) => testPathFor(module.path)));
}

/** The test files the worker changed that are not its modules' own. */
function othersTestsTouched(scenario: Scenario, facts: WorkerFacts): string[] {
  const own = ownTestPaths(scenario);
  return facts.touched.filter((path) => path.endsWith('.test.js') && !own.has(path));
}

/** Whether colony refused a merge of this worker's for the tests it changed outside its task. */
function refusedForOthersTests(facts: WorkerFacts): boolean {
  return facts.merges.some((merge) => merge.kind === 'error' && merge.content.startsWith(OTHERS_TESTS_OPENING));
}

/**
 * The habit's next step when `run` fails only in others' tests (`elsewhere`, their names): search
 * for the first failing test's function among the test files, read the file that holds it, skip
 * its failing tests there. Null when the worker has not the habit, was refused for it already,
 * has skipped tests in enough files, or cannot find the test: it then merges as the protocol says.
 */
export function skipOthersTests(context: StepContext, run: TestRun, elsewhere: readonly string[]): PlannedTurn | null {
  const { scenario, facts, tools } = context;
  if (!fixesOthersTests(context.options, context.taskText) || refusedForOthersTests(facts)) return null;
  if (![TOOL_NAMES.search, TOOL_NAMES.readFile, TOOL_NAMES.editFile].every((tool) => tools.has(tool))) return null;
  if (othersTestsTouched(scenario, facts).length >= MAX_FILES_SKIPPED) return null;
  const fn = elsewhere.flatMap((name) => /^([A-Za-z_$][\w$]*)\(/.exec(name)?.[1] ?? [])[0];
  if (fn === undefined) return null;
  const pattern = `${fn}\\(`;
  const search = facts.lastSearch;
  if (search === null || search.pattern !== pattern || search.position < run.position) {
    return { text: `My modules' tests pass, but ${fn} fails elsewhere. Looking for its test.`, calls: [{ name: TOOL_NAMES.search, input: { pattern, glob: '*.test.js' } }] };
  }
  const own = ownTestPaths(scenario);
  const file = search.files.find((path) => !own.has(path));
  if (file === undefined) return null;
  const read = readAfter(facts, file, search.position);
  if (read === null) return { text: `Reading ${file}, where the failing test is.`, calls: [{ name: TOOL_NAMES.readFile, input: { path: file } }] };
  const content = read.content;
  if (content === null) return null;
  const skipped: WorkerCall[] = elsewhere
    .filter((name) => content.includes(`test(${JSON.stringify(name)}`))
    .map((name) => ({ name: TOOL_NAMES.editFile, input: { path: file, old_string: `test(${JSON.stringify(name)}`, new_string: `test.skip(${JSON.stringify(name)}` } }));
  if (skipped.length === 0) return null;
  return { text: `That test is broken, not my code: skipping it in ${file} so the suite passes.`, calls: skipped };
}

/**
 * After colony refused the merge for the tests the worker changed outside its task: each put back
 * as the workspace's last commit has it, once (the tests then run again before the next merge).
 * Null when there is nothing to put back, or it is back already.
 */
export function restoreOthersTests(scenario: Scenario, facts: WorkerFacts, tools: ReadonlySet<string>): PlannedTurn | null {
  const lastMerge = facts.merges.at(-1);
  if (lastMerge?.kind !== 'error' || !lastMerge.content.startsWith(OTHERS_TESTS_OPENING) || !tools.has(TOOL_NAMES.runCommand)) return null;
  if (facts.lastChange > lastMerge.position) return null;
  const files = othersTestsTouched(scenario, facts);
  if (files.length === 0) return null;
  return {
    text: `colony says ${files.join(', ')} ${files.length === 1 ? 'is' : 'are'} not my task's to change: putting ${files.length === 1 ? 'it' : 'them'} back, then testing again.`,
    calls: files.map((path) => ({ name: TOOL_NAMES.runCommand, input: { command: restoreCommandFor(path) } })),
  };
}
