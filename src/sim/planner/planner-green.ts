import { failureName } from '../reading/command-output.js';
import type { ToolOutcome } from '../worker/worker-conversation.js';
import { RELEASE_REFUSED_OPENING } from '../../protocol/message-openings.js';
import type { ModuleRecord } from './types.js';
import type { Scenario } from '../scenario/scenario.js';
import type { SpecModule } from '../../spec/colony-spec.js';

/**
 * What the sim planner makes of colony's word that main's check fails: a fix-up message from
 * the green loop, or its done `finish` refused while the release snapshot fails (the words are
 * in green-protocol.ts). The failure lines are mapped to its modules as its own test runs on
 * main are, by function name; a module on main with failing tests needs a fix task.
 */

/** The failing test names that belong to `module`: a test is named after the function it calls, like `padLeft("a", 3)`. */
export function ownFailures(module: SpecModule, names: readonly string[]): string[] {
  return names.filter((name) => module.exports.some((fn) => name.startsWith(`${fn.name}(`)));
}

/** The problem a fix task's brief quotes for failures colony's green check reported. */
export function greenProblem(names: readonly string[]): string {
  return `main's green check failed: ${names.join('; ')}`;
}

/** The problem a fix task's brief quotes for failures of a refused finish. */
export function releaseProblem(names: readonly string[]): string {
  return `main's release check failed when I finished: ${names.join('; ')}`;
}

/**
 * Marks the modules the failure lines name: one on main becomes 'failing' (a fix task is
 * published for it); one whose task is still open keeps the failures pending until that task
 * lands, unless the task was published to fix just those; one already failing adds them. One
 * without a landed version (never published, or not landed) is built anew anyway. Returns the
 * lines that named a test of some module.
 */
export function applyGreenFailures(lines: readonly string[], modules: readonly ModuleRecord[], problem: (names: readonly string[]) => string): Set<string> {
  const named = lines.map((line) => ({ line, name: failureName(line) }));
  const mapped = new Set<string>();
  for (const record of modules) {
    const own = named.filter(({ name }) => ownFailures(record.module, [name]).length > 0);
    for (const { line } of own) mapped.add(line);
    const names = [...new Set(own.map(({ name }) => name))];
    if (names.length > 0) markFailing(record, names, problem);
  }
  return mapped;
}

function markFailing(record: ModuleRecord, names: readonly string[], problem: (names: readonly string[]) => string): void {
  if (record.phase === 'landed') {
    record.phase = 'failing';
    record.failingTests = [...names];
    record.problems.push(problem(names));
    return;
  }
  // Open, the task's failingTests are those it was published to fix.
  const fresh = names.filter((name) => !record.failingTests.includes(name) && !record.pendingFailures.includes(name));
  if (record.phase === 'failing') record.failingTests.push(...fresh);
  if (record.phase === 'open') record.pendingFailures.push(...fresh);
}

/** Whether a finish came back refused because main's release snapshot fails. */
export function isReleaseRefusal(result: ToolOutcome): boolean {
  return result.isError && result.content.trimStart().startsWith(RELEASE_REFUSED_OPENING);
}

/** A sentence acknowledging a fix-up message: which of its failures are this planner's, if any. */
export function acknowledgeGreenReport(failures: readonly string[], scenario: Scenario | null): string {
  const first = failures[0] ?? 'no failure lines given';
  const names = failures.map(failureName);
  const mine = (scenario?.modules ?? []).filter((module) => ownFailures(module, names).length > 0).map((module) => module.path);
  if (mine.length === 0) return `colony says main is red (${first}), but none of those failures is in my modules; it does not change my plan. `;
  return `colony says main is red (${first}): that is ${mine.join(', ')}, which I will have fixed. `;
}
