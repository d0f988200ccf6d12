import { describe, expect, it } from 'vitest';
import { failingTestNames, failureName, readCommandReport } from './command-output.js';

describe('reading a run_command report', () => {
  it('reads the exit code and the output after the blank line', () => {
    expect(readCommandReport('exit code: 1\n\nnot ok 1 - adds\n')).toEqual({ statusLine: 'exit code: 1', exitCode: 1, output: 'not ok 1 - adds\n' });
  });

  it('skips a second status line about truncated output', () => {
    const content = 'exit code: 0\noutput truncated: 1.2 MB in all, full output in /tmp/colony-output/cmd-3.log\n\n# pass 12\n';
    expect(readCommandReport(content)).toMatchObject({ exitCode: 0, output: '# pass 12\n' });
  });

  it('reads a command the sandbox ended for a limit as one that did not exit by itself', () => {
    for (const statusLine of [
      'out of memory: the command was killed at the 2 GB limit',
      'CPU time limit of 600 s reached: the command was killed',
      'file size limit of 1 GB reached: the command was killed',
    ]) {
      expect(readCommandReport(`${statusLine}\n\npartial\n`)).toEqual({ statusLine, exitCode: null, output: 'partial\n' });
    }
  });

  it('is not fooled by an output line that only looks like a second status line', () => {
    expect(readCommandReport('exit code: 0\n\noutput truncated: said by the command\n')).toMatchObject({ output: 'output truncated: said by the command\n' });
  });

  it('refuses what is not a report', () => {
    expect(readCommandReport('could not run the command: the working directory does not exist')).toBeNull();
  });
});

describe('reading failing test names', () => {
  it('reads TAP lines with and without their number, and spec lines with and without their time', () => {
    const output = ["not ok 3 - slugify('A b')", "not ok - padLeft('a', 3)", '✖ clamp(5, 0, 3) (1.25ms)', '✖ words()', 'ok 4 - fine'].join('\n');
    expect(failingTestNames(output)).toEqual(["slugify('A b')", "padLeft('a', 3)", 'clamp(5, 0, 3)', 'words()']);
  });

  it('names a failure line by its test, or by the line itself when it names none', () => {
    expect(failureName("not ok - slugify('A b')")).toBe("slugify('A b')");
    expect(failureName("  not ok 12 - slugify('A b')  ")).toBe("slugify('A b')");
    expect(failureName("✖ slugify('A b') (3ms)")).toBe("slugify('A b')");
    expect(failureName("slugify('A b') returns 'a-b'")).toBe("slugify('A b') returns 'a-b'");
    expect(failureName(' Error: Cannot find module ./x.js ')).toBe('Error: Cannot find module ./x.js');
  });
});
