/**
 * Reading what run_command sent back: a status line (`exit code: N`, `timed out after ...`,
 * `out of memory: ...`, `CPU time limit ...`, `file size limit ...`, `killed by signal ...`),
 * at most one more (`out of memory: a process ...`, `output truncated: ...`), a blank line,
 * then the output.
 */

export interface CommandReport {
  readonly statusLine: string;
  /** Null when the command did not exit by itself (timed out or killed). */
  readonly exitCode: number | null;
  readonly output: string;
}

const STATUS_PATTERN = /^(exit code: (-?\d+)|timed out after .*|out of memory: .*|CPU time limit .*|file size limit .*|killed by signal .*)$/;
const SECOND_STATUS_PATTERN = /^(out of memory: .*|output truncated: .*)$/;

/** Null when the content is not a command report (the tool itself failed). */
export function readCommandReport(content: string): CommandReport | null {
  const newline = content.indexOf('\n');
  const statusLine = (newline === -1 ? content : content.slice(0, newline)).trim();
  const match = STATUS_PATTERN.exec(statusLine);
  if (match === null) return null;
  const exitCode = match[2] === undefined ? null : Number(match[2]);
  let rest = newline === -1 ? '' : content.slice(newline + 1);
  const secondEnd = rest.indexOf('\n');
  if (secondEnd !== -1 && SECOND_STATUS_PATTERN.test(rest.slice(0, secondEnd).trim())) rest = rest.slice(secondEnd + 1);
  const output = rest.replace(/^\r?\n/, '');
  return { statusLine, exitCode, output };
}

export function commandPassed(report: CommandReport): boolean {
  return report.exitCode === 0;
}

/** The last `count` non-empty lines of an output: what a person reads first. */
export function tailOf(output: string, count = 15): string {
  const lines = output.split('\n').filter((line) => line.trim().length > 0);
  return lines.slice(-count).join('\n');
}

/**
 * The names of the tests that failed, from TAP (`not ok 3 - name`, or `not ok - name` as a
 * normalised failure line has it) or spec (`✖ name`) output.
 */
export function failingTestNames(output: string): string[] {
  const names: string[] = [];
  for (const line of output.split('\n')) {
    const name = testNameOf(line);
    if (name !== null && !name.startsWith('failing tests') && !names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * What a failure line names: the test of a TAP or spec line, or the line itself (an error line,
 * or a name already without its marker). How the failure lines of colony's green check are read.
 */
export function failureName(line: string): string {
  return testNameOf(line) ?? line.trim();
}

function testNameOf(line: string): string | null {
  const tap = /^\s*not ok(?: \d+)?(?: -)? (.+?)\s*$/.exec(line);
  const spec = /^\s*✖ (.+?)(?: \([\d.]+m?s\))?\s*$/.exec(line);
  return tap?.[1] ?? spec?.[1] ?? null;
}

/** How many tests passed, when the output says (`# pass 12` or `ℹ pass 12`). */
export function passCount(output: string): number | null {
  const match = /^[#ℹ] pass (\d+)\s*$/m.exec(output);
  return match?.[1] === undefined ? null : Number(match[1]);
}
