import type { EarlierAttempt } from './planner-briefs.js';
import { buildBrief, delegateBrief, fixBrief } from './planner-briefs.js';
import type { ModuleRecord, PlannerLedger } from './types.js';
import { describePlan, plural, splitModules } from './planner-plan.js';
import type { PlannerCall } from './planner-tool-calls.js';
import type { Scenario } from '../scenario/scenario.js';
import type { SpecModule } from '../../spec/colony-spec.js';
import { testPathFor } from '../scenario/module-render.js';
import { seededRoll } from '../seeded-roll.js';
import type { SimOptions } from '../sim-options.js';
import { HANDOFF_CONCERNS_QUOTED, HANDOFF_NOTES_QUOTED } from './types.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';
import { coveringTestsCommand } from '../reading/covering-tests-protocol.js';

/** Tasks (worker, delegated or fix) that may carry one module before the planner gives it up. */
export const MAX_ATTEMPTS = 6;
/** Refused create_task/delegate calls for one module before the planner gives it up. */
export const MAX_PUBLISH_ERRORS = 3;
export function needsWork(record: ModuleRecord): boolean {
  return record.phase === 'unpublished' || record.phase === 'not-landed' || record.phase === 'failing';
}

export function givenUp(record: ModuleRecord): boolean {
  return needsWork(record) && (record.attempts >= MAX_ATTEMPTS || record.publishErrors >= MAX_PUBLISH_ERRORS);
}

/**
 * The modules the planner has given up: those out of attempts, and those that use one of them
 * (a module never builds without what it imports). In list order.
 */
export function droppedModules(ledger: PlannerLedger): ModuleRecord[] {
  const dropped = new Set<string>();
  for (const record of ledger.modules) {
    const stranded = (record.module.uses ?? []).some((used) => dropped.has(used));
    if (givenUp(record) || (needsWork(record) && stranded)) dropped.add(record.module.path);
  }
  return ledger.modules.filter((record) => dropped.has(record.module.path));
}

/**
 * Whether the modules `record` uses are on main: landed, or landed with failing tests. One this
 * planner does not build is taken as there: the planner above published this one's area only
 * once it landed.
 */
function prerequisitesLanded(record: ModuleRecord, byPath: ReadonlyMap<string, ModuleRecord>): boolean {
  return (record.module.uses ?? []).every((used) => {
    const phase = byPath.get(used)?.phase;
    return phase === undefined || phase === 'landed' || phase === 'failing';
  });
}

/**
 * Whether the planner publishes `record`'s first task before the modules it uses landed (the
 * `dependent` knob), as real models publish every task they know of at once: rolled per module.
 * Told by the worker's blocked handoff, it waits for them before the retry.
 */
export function publishesBeforePrerequisites(options: SimOptions, record: ModuleRecord): boolean {
  return record.attempts === 0 && options.dependent > 0 && seededRoll(options.seed, record.module.path, 0, 'dependent') < options.dependent;
}

/**
 * Whether the planner tells a Build task of `module` to merge without running the tests (the
 * `skiptests` knob): rolled per module, so a retry is told the same as its first attempt.
 */
export function toldToSkipTests(options: SimOptions, module: SpecModule): boolean {
  return options.skiptests > 0 && seededRoll(options.seed, module.path, 0, 'skiptests') < options.skiptests;
}

/**
 * Whether the planner gives the task on `subject` (a module's path, or an area it delegates) the
 * whole suite where it would scope its tests (the `wholesuite` knob): rolled per subject, so a
 * retry is told the same.
 */
function givesWholeSuite(options: SimOptions, subject: string): boolean {
  return options.wholesuite > 0 && seededRoll(options.seed, subject, 0, 'wholesuite') < options.wholesuite;
}

/**
 * Above this many modules a project's whole suite is no longer what every task runs: each task
 * is given the tests that cover it, and main's green check runs the whole suite.
 */
export const FAST_SUITE_MODULES = 12;

/**
 * One call per piece of work the modules need now: a fix task for each module whose tests
 * fail on main, a retry (`retry_of` the failed task) for each module a worker did not land,
 * and for the rest (never published, or not landed by a sub-planner) the split: a delegate
 * per large area, a task per other module. A Build task told to skip the tests gets no
 * acceptance checks, which would test it at the merge; a fix task is never told so.
 */
export function publishCalls(
  scenario: Scenario,
  ledger: PlannerLedger,
  base: string,
  tools: ReadonlySet<string>,
  options: SimOptions,
  scoped: boolean,
): PlannerCall[] {
  const { project } = scenario;
  const covering = (subject: string, modules: readonly SpecModule[]): string | null =>
    scoped && !givesWholeSuite(options, subject) ? coveringTestsCommand(modules.map((module) => testPathFor(module.path))) : null;
  const dropped = new Set(droppedModules(ledger));
  const byPath = new Map(ledger.modules.map((record) => [record.module.path, record]));
  // A module waits for the modules it uses to land, its brief then written against main as it is.
  const work = ledger.modules.filter(
    (record) => needsWork(record) && !dropped.has(record) && (prerequisitesLanded(record, byPath) || publishesBeforePrerequisites(options, record)),
  );
  const pool = work.filter((record) => record.phase !== 'failing' && record.latestTask?.kind !== 'worker');
  const split = tools.has(TOOL_NAMES.delegate)
    ? splitModules(pool.map((record) => record.module), base)
    : { delegated: [], tasks: pool.map((record) => record.module) };
  const calls: PlannerCall[] = split.delegated.map(({ area, modules }) => {
    const members = pool.filter((record) => modules.includes(record.module));
    const earlier = members.some((record) => record.attempts > 0) ? groupHistory(members) : null;
    return { name: TOOL_NAMES.delegate, input: { title: `Own ${area}`, scope: area, brief: delegateBrief(project, area, modules, earlier, covering(area, modules)) } };
  });
  // A fix must leave the tests passing on main; a Build task its covering tests (the whole suite
  // where that is fast). colony checks that, unless the task was told to merge untested, when
  // main's green check is the first to test it.
  const acceptance = [project.test];
  for (const record of work) {
    const { module } = record;
    const paths = pathsOf(project, module);
    if (record.phase === 'failing') {
      const brief = fixBrief(project, module, record.failingTests, history(record));
      calls.push({ name: TOOL_NAMES.createTask, input: { title: `Fix ${module.path}: its tests fail on main`, brief, paths, acceptance } });
      continue;
    }
    const retried = record.latestTask?.kind === 'worker' ? record.latestTask.id : null;
    if (retried === null && !split.tasks.includes(module)) continue;
    const skipTests = toldToSkipTests(options, module);
    const tests = covering(module.path, [module]);
    // The `republish` habit: the first attempt's brief sent again as it was, as a new task.
    const again = retried !== null && republishesAsItWas(options, record);
    const brief = buildBrief(project, module, record.attempts > 0 && !again ? history(record) : null, { skipTests, covering: tests });
    const retry = retried === null || again ? {} : { retry_of: retried };
    const checks = skipTests ? {} : { acceptance: tests === null ? acceptance : [tests] };
    calls.push({ name: TOOL_NAMES.createTask, input: { title: `Build ${module.path}`, brief, ...retry, paths, ...checks } });
  }
  return calls;
}

/**
 * Whether the planner publishes `record`'s failed task again as it was, without `retry_of` (the
 * `republish` knob): rolled per module, only after a first attempt that handed off not done,
 * and only until colony refused a publish of the module (it then retries with `retry_of`).
 */
export function republishesAsItWas(options: SimOptions, record: ModuleRecord): boolean {
  const failed = record.latestTask?.kind === 'worker' && record.latestTask.handoff !== null && record.latestTask.handoff.status !== 'done';
  if (!failed || record.attempts !== 1 || record.publishErrors > 0) return false;
  return options.republish > 0 && seededRoll(options.seed, record.module.path, 0, 'republish') < options.republish;
}

/** The files a task on `module` changes, as its brief names them: the module, its test file, the index. */
function pathsOf(project: Scenario['project'], module: SpecModule): string[] {
  return [module.path, testPathFor(module.path), project.index];
}

/**
 * What the next attempt is told: the last problem, and the notes and concerns of a worker
 * handoff that did not end done (a done one explains nothing about a later failure).
 */
function history(record: ModuleRecord): EarlierAttempt {
  const handoff = record.latestTask?.handoff ?? null;
  const lines = [...record.problems.slice(-1)];
  if (handoff !== null && handoff.status !== 'done' && record.latestTask?.kind === 'worker') {
    lines.push(...handoff.notes.slice(0, HANDOFF_NOTES_QUOTED), ...handoff.concerns.slice(0, HANDOFF_CONCERNS_QUOTED));
  }
  return { attempt: record.attempts + 1, of: MAX_ATTEMPTS, lines };
}

function groupHistory(members: readonly ModuleRecord[]): EarlierAttempt {
  const lines = [...new Set(members.flatMap((record) => record.problems.slice(-1)))];
  return { attempt: Math.max(...members.map((record) => record.attempts)) + 1, of: MAX_ATTEMPTS, lines };
}

/** The scratchpad: the plan, then where every module stands. */
export function scratchpadContent(
  ledger: PlannerLedger,
  base: string,
  owner: string,
  { publishing, later }: { readonly publishing: number; readonly later: number },
): string {
  const count = (phase: ModuleRecord['phase']): number => ledger.modules.filter((record) => record.phase === phase).length;
  const dropped = droppedModules(ledger);
  const plan = describePlan(
    ledger.modules.map((record) => record.module),
    base,
    owner,
  );
  const lines = [
    ...plan,
    '',
    `Progress: ${count('landed')} landed, ${count('open')} with a task, ` +
      `${publishing} call${plural(publishing)} to publish now${later > 0 ? ` and ${later} in the next answers` : ''}, ${dropped.length} given up.`,
    `Rules: up to ${MAX_ATTEMPTS} attempts per module; a failed worker task is retried with retry_of; ` +
      'a module is published once the modules it uses landed; when nothing is open, run the tests on main and finish.',
  ];
  const byPath = new Map(ledger.modules.map((record) => [record.module.path, record]));
  for (const record of ledger.modules) {
    if (!needsWork(record) || dropped.includes(record) || prerequisitesLanded(record, byPath)) continue;
    lines.push(`- waiting: ${record.module.path} until ${(record.module.uses ?? []).join(', ')} landed`);
  }
  for (const record of dropped) {
    const stranded = givenUp(record) ? '' : ', a module it uses was given up';
    lines.push(`- given up: ${record.module.path} after ${record.attempts} attempts${stranded}`);
  }
  return lines.join('\n');
}
