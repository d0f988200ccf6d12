import { NOT_LANDED_PREFIX } from '../reading/handoff-message.js';
import type { PlannerLedger, ReleaseRefusal, TestRun } from './types.js';
import { firstLine } from './planner-ledger.js';
import { plural } from './planner-plan.js';
import { droppedModules } from './planner-publish.js';
import type { FinishInput } from './planner-tool-calls.js';

/** What the planner knows about main's tests when it finishes. */
export type TestVerdict =
  | { readonly kind: 'ran'; readonly run: TestRun }
  | { readonly kind: 'not-run'; readonly reason: string; readonly failed: boolean };

export interface FinishFacts {
  readonly ledger: PlannerLedger;
  /** The sub-planner's scope, or null for the root planner. */
  readonly scope: string | null;
  readonly verdict: TestVerdict;
  /** The command it checks main with: the project's tests, or a sub-planner's tests of its area that landed. */
  readonly check: string;
}

/**
 * The planner's finish, once nothing is open and nothing more can be published. Modules it
 * gave up make it partial, each named in a `not landed: <path>` note so its parent knows
 * what to redo. Failing tests it cannot map to its own modules make the root planner fail;
 * a sub-planner reports them as a concern, since they belong to someone else's scope.
 */
export function finishInput(facts: FinishFacts): FinishInput {
  const { ledger, scope, verdict } = facts;
  const command = facts.check;
  const owner = scope === null ? 'the goal' : `\`${scope}\``;
  const dropped = droppedModules(ledger);
  const notes: string[] = [];
  const concerns: string[] = [];
  let testsSay = `I could not run \`${command}\` on main`;
  let failed = false;
  if (verdict.kind === 'ran') {
    const { run } = verdict;
    notes.push(testRunNote(command, run));
    testsSay = `\`${command}\` ${run.passed ? 'passes' : 'fails'} on main`;
    const outside = outsideFailures(run);
    if (outside !== null) {
      concerns.push(`Failing on main, not from any module of ${owner}: ${outside}`);
      failed = scope === null;
    }
  } else {
    concerns.push(verdict.reason);
    failed = verdict.failed;
  }
  for (const record of dropped) {
    notes.push(`${NOT_LANDED_PREFIX}${record.module.path}`);
    const last = firstLine(record.problems.at(-1) ?? 'no further detail');
    concerns.push(`${record.module.path} did not land after ${record.attempts} attempt${plural(record.attempts)}; the last: ${last}`);
  }
  for (const task of ledger.tasks) {
    const carried = task.kind === 'planner' ? `, ${task.modulePaths.join(', ')}` : '';
    notes.push(`task ${task.id} (${task.title}): ${task.handoff?.status ?? 'no handoff'}${carried}`);
  }
  const total = ledger.modules.length;
  const workers = ledger.tasks.filter((task) => task.kind === 'worker').length;
  const summary =
    `${total - dropped.length} of ${total} module${plural(total)} of ${owner} landed` +
    `${dropped.length > 0 ? `, ${dropped.length} given up` : ''}; ` +
    `${ledger.tasks.length} task${plural(ledger.tasks.length)} published (${workers} to workers, ${ledger.tasks.length - workers} delegated); ` +
    `${testsSay}.`;
  return { status: failed ? 'failed' : dropped.length > 0 ? 'partial' : 'done', summary, notes, concerns };
}

/**
 * The finish after colony refused a done one, when nothing has landed since: its failures are
 * none it could fix (or fixes for them could not be published), so it says so and fails,
 * quoting the first failure line, rather than finish done into the same refusal again.
 */
export function refusedFinishInput(facts: FinishFacts, refusal: ReleaseRefusal): FinishInput {
  const base = finishInput(facts);
  const owner = facts.scope === null ? 'the goal' : `\`${facts.scope}\``;
  const why =
    refusal.failures.length === 0
      ? 'it named no failing test'
      : refusal.unmapped.length === refusal.failures.length
        ? `none of its failures is in a module of ${owner}`
        : `the failures in modules of ${owner} were not fixed`;
  const unmapped = refusal.unmapped.length > 0 ? [`Failing on main, not from any module of ${owner}: ${refusal.unmapped.join('; ')}`] : [];
  return {
    ...base,
    status: 'failed',
    summary: `main's release check fails (${refusedQuote(refusal)}) and ${why}, so the run cannot end done. ${base.summary}`,
    concerns: [`colony refused my done finish: main's release check fails: ${refusedQuote(refusal)}`, ...unmapped, ...(base.concerns ?? [])],
  };
}

/** The first failure line of a refused finish, as quoted in the planner's words. */
export function refusedQuote(refusal: ReleaseRefusal): string {
  return refusal.failures[0] ?? 'no failure lines given';
}

function testRunNote(command: string, run: TestRun): string {
  return `$ ${command} (on main): ${run.statusLine}${run.passCount === null ? '' : `, ${run.passCount} tests pass`}`;
}

/** Failing tests that belong to none of the planner's modules, in words; null when there are none. */
function outsideFailures(run: TestRun): string | null {
  if (run.unmapped.length > 0) return run.unmapped.join('; ');
  if (!run.passed && run.failingCount === 0) return `no test names in the output; it ended with ${run.statusLine}`;
  return null;
}

/**
 * The planner's finish when told its budget is used up: what landed, and every module that did
 * not named in a `not landed: <path>` note so its parent knows what is left. Refused a done
 * finish since the last handoff (`refused`), it says partial, quoting what fails on main.
 */
export function budgetFinishInput(
  { ledger, scope, check }: Omit<FinishFacts, 'verdict'>,
  refused: ReleaseRefusal | null,
): FinishInput {
  const owner = scope === null ? 'the goal' : `\`${scope}\``;
  const left = ledger.modules.filter((record) => record.phase !== 'landed');
  const total = ledger.modules.length;
  const open = ledger.tasks.filter((task) => task.handoff === null).length;
  const concerns = refused === null ? [] : [`colony refused my done finish: main's release check fails: ${refusedQuote(refused)}`];
  return {
    status: left.length === 0 && refused === null ? 'done' : 'partial',
    summary:
      `The budget was used up: ${total - left.length} of ${total} module${plural(total)} of ${owner} landed` +
      `${open > 0 ? `, ${open} task${plural(open)} still out` : ''}; I did not run \`${check}\` on main.`,
    notes: left.map((record) => `${NOT_LANDED_PREFIX}${record.module.path}`),
    ...(concerns.length === 0 ? {} : { concerns }),
    follow_ups: left.length === 0 ? [] : [`Build what is left with more budget: ${left.map((record) => record.module.path).join(', ')}.`],
  };
}
