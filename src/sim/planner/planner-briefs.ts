import { GREEN_FAILURES_HEADING } from '../../protocol/message-openings.js';
import { NOT_LANDED_PREFIX } from '../reading/handoff-message.js';
import { plural } from './planner-plan.js';
import type { Scenario } from '../scenario/scenario.js';
import type { SpecModule } from '../../spec/colony-spec.js';
import { testPathFor } from '../scenario/module-render.js';
import { SKIP_TESTS_LINE } from '../reading/skip-tests-protocol.js';
import { coveringTestsLine } from '../reading/covering-tests-protocol.js';
import { specBlock } from '../scenario/scenario.js';

/**
 * The briefs the sim planner writes: prose a person (or a real model) can follow, then a
 * colony-spec block with the same project and just the modules the task is about, so a sim
 * worker or sub-planner reads exactly its share.
 */

/** What went wrong before, told to the next attempt. */
export interface EarlierAttempt {
  readonly attempt: number;
  readonly of: number;
  /** One line per thing to know: the last handoff's summary and notes, or the failing tests. */
  readonly lines: readonly string[];
}

export interface BuildBriefOptions {
  /** Told to skip the tests (the `skiptests` knob): a merge without running them, in SKIP_TESTS_LINE. */
  readonly skipTests: boolean;
  /** The command that runs the tests covering the module, named on a line of its own; null for the project's whole suite. */
  readonly covering: string | null;
}

/** A Build task's brief: the tests it runs are those that cover the module, or the whole suite where that is fast. */
export function buildBrief(
  project: Scenario['project'],
  module: SpecModule,
  earlier: EarlierAttempt | null,
  { skipTests, covering }: BuildBriefOptions = { skipTests: false, covering: null },
): string {
  const functions = module.exports.map((fn) => fn.name).join(', ');
  const tests = covering === null ? `the project's tests (\`${project.test}\`)` : `the tests that cover it (\`${covering}\`; main's green check runs the whole suite)`;
  const check = skipTests ? '' : `run ${tests} until they pass, `;
  const prose =
    `Build \`${module.path}\`: it exports ${functions}, answering the cases the colony-spec below lists for each. ` +
    `Write its node:test file next to it (\`${testPathFor(module.path)}\`) checking every case, ` +
    `re-export the module from \`${project.index}\`, ${check}merge to main, and hand off with what you did.`;
  const uses = module.uses ?? [];
  // What it needs from other tasks, named in the brief, with what to do when it is not there yet.
  const needs =
    uses.length === 0
      ? []
      : [`It imports ${uses.map((path) => `\`${path}\``).join(', ')}, which other tasks build: if one is not on main when you start, do not write it or stub it; hand off blocked, naming it.`];
  const skip = skipTests ? [SKIP_TESTS_LINE] : [];
  const named = covering === null || skipTests ? [] : [coveringTestsLine(covering)];
  return [prose, ...needs, ...skip, ...named, ...earlierSection(earlier), '', specBlock(project, [module])].join('\n');
}

/**
 * A fix task's brief, the failing tests under GREEN_FAILURES_HEADING: a brief with that heading
 * is a fix, and a sim worker always runs the tests on a fix.
 */
export function fixBrief(project: Scenario['project'], module: SpecModule, failingTests: readonly string[], earlier: EarlierAttempt): string {
  const prose =
    `The tests of \`${module.path}\` fail on main. Make the module (and its test file \`${testPathFor(module.path)}\`) ` +
    `match the colony-spec below again, keep it re-exported from \`${project.index}\`, run \`${project.test}\` until it passes, ` +
    'merge to main, and hand off with what you found and changed.';
  const failing = ['', GREEN_FAILURES_HEADING, ...failingTests.map((name) => `- ${name}`)];
  return [prose, ...failing, ...earlierSection(earlier), '', specBlock(project, [module])].join('\n');
}

/**
 * A sub-planner's brief. Scoped (`covering`), it names the command that runs its area's tests:
 * what the sub-planner checks main with and what its tasks' covering tests come from.
 */
export function delegateBrief(
  project: Scenario['project'],
  area: string,
  modules: readonly SpecModule[],
  earlier: EarlierAttempt | null,
  covering: string | null = null,
): string {
  const tests =
    covering === null
      ? `The project's tests (\`${project.test}\`) must pass on main.`
      : `Its tests (\`${covering}\`) must pass on main; give each task the tests that cover it, as main's green check runs the whole suite.`;
  const prose =
    `You own \`${area}\`: build its ${modules.length} module${plural(modules.length)} listed in the colony-spec below, ` +
    `each in its own file with a node:test file next to it and re-exported from \`${project.index}\`. ` +
    `${tests} Split the work into tasks as you see fit. ` +
    `When you finish, name every module that did not land in a note of its own: \`${NOT_LANDED_PREFIX}<path>\`.`;
  const named = covering === null ? [] : [coveringTestsLine(covering)];
  return [prose, ...named, ...earlierSection(earlier), '', specBlock(project, modules)].join('\n');
}

function earlierSection(earlier: EarlierAttempt | null): string[] {
  if (earlier === null) return [];
  // Quoted text must not open a code block of its own: the first colony-spec block is the task.
  const lines = earlier.lines.map((line) => `- ${line.replace(/`{3,}/g, "'''")}`);
  return ['', `This is attempt ${earlier.attempt} of ${earlier.of}. What happened before:`, ...lines];
}
