/**
 * The words of the `skiptests` knob (sim-options.ts): the line a sim planner writes into a Build
 * task's brief to have it merged untested, and the note a sim worker leaves for each module it
 * merged wrong on purpose. The note is the sim's own record of what it broke, so a test can
 * hold what colony's green loop found (the first bad commit, the task it blamed) against it
 * (docs/architecture/sim.md, "The green branch").
 */

/** A line of its own in a Build task's brief: the worker merges without running the tests. */
export const SKIP_TESTS_LINE = "Merge without running the tests: main's green check tests it after you.";

/** A handoff note of a worker that skipped the tests, followed by the path of a module it knew to be wrong when it merged. */
export const SIM_BROKE_ON_PURPOSE_NOTE = 'sim: wrote wrong on purpose: ';

/** Whether a brief tells its worker to merge without running the tests. */
export function carriesSkipTestsLine(brief: string): boolean {
  return brief.split('\n').some((line) => line.trim() === SKIP_TESTS_LINE);
}

/** The module paths a handoff's notes say were merged wrong on purpose. */
export function brokenOnPurposePaths(notes: readonly string[]): string[] {
  return notes.filter((note) => note.startsWith(SIM_BROKE_ON_PURPOSE_NOTE)).map((note) => note.slice(SIM_BROKE_ON_PURPOSE_NOTE.length).trim());
}
