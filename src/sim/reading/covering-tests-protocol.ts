/**
 * How a sim planner names the tests that cover a task, and how the sim worker or sub-planner
 * that takes the task reads them. colony's green loop runs the project's whole suite on main;
 * a task checks only what it changes, so the tests a run pays for grow with what it builds, not
 * with the project's size (docs/architecture/planner.md, "The protocol, and why").
 */

/** The start of a line of its own in a brief: the command that runs the task's tests, in backquotes. */
export const COVERING_TESTS_OPENING = 'Tests that cover this change: ';

/** The line a brief names its covering tests in. */
export function coveringTestsLine(command: string): string {
  return `${COVERING_TESTS_OPENING}\`${command}\``;
}

/** The command that runs just these node:test files. */
export function coveringTestsCommand(testFiles: readonly string[]): string {
  return `node --test ${testFiles.join(' ')}`;
}

/** The covering tests a brief names, or null when it names none (then the project's whole suite is the task's test). */
export function coveringTestsIn(brief: string): string | null {
  for (const line of brief.split('\n')) {
    if (!line.startsWith(COVERING_TESTS_OPENING)) continue;
    const command = /^`([^`]+)`\s*$/.exec(line.slice(COVERING_TESTS_OPENING.length))?.[1];
    if (command !== undefined) return command;
  }
  return null;
}

/** Whether `command` runs named node:test files, as a covering-tests command does. */
export function isCoveringTestsCommand(command: string): boolean {
  return command.startsWith('node --test ');
}
