import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureLines, outputTail } from './check-failures.js';

const FAILING_TESTS = `import test from 'node:test';
import assert from 'node:assert/strict';
test('adds', () => { assert.equal(1 + 1, 2); });
test('subtracts', () => { assert.equal(1 - 1, 2); });
test('group', async (t) => {
  await t.test('inner throws', () => { throw new Error('boom at 42'); });
  await t.test('inner passes', () => {});
});
`;

describe('failureLines on the real output of node --test', () => {
  let dir: string;
  const runNodeTest = (reporter: 'tap' | 'spec'): string => {
    const result = spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect(result.status).toBe(1);
    return `${result.stdout}${result.stderr}`;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'colony-node-test-'));
    writeFileSync(join(dir, 'math.test.mjs'), FAILING_TESTS);
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the failing tests of TAP output without their numbers or durations, the same in every run', () => {
    const first = runNodeTest('tap');
    const second = runNodeTest('tap');
    expect(first).toMatch(/not ok 2 - subtracts/);
    expect(first).not.toBe(second);
    const lines = failureLines(first);
    expect(lines).toEqual(['not ok - subtracts', 'not ok - inner throws', "error: 'boom at 42'", 'not ok - group', "error: '1 subtest failed'"]);
    expect(failureLines(second)).toEqual(lines);
  });

  it('names the failing tests and their errors of spec output, each once, without durations', () => {
    const first = runNodeTest('spec');
    const second = runNodeTest('spec');
    expect(first).toMatch(/✖ subtracts \(\d+(\.\d+)?ms\)/u);
    const lines = failureLines(first);
    expect(lines).toEqual([
      '✖ subtracts',
      'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
      '✖ inner throws',
      'Error: boom at 42',
      '✖ group',
    ]);
    expect(failureLines(second)).toEqual(lines);
  });
});

describe('failureLines on other runners’ output', () => {
  it('reads pytest', () => {
    const output = `============================= test session starts ==============================
platform linux -- Python 3.11.4, pytest-7.4.0, pluggy-1.2.0
rootdir: /home/u/calc
collected 3 items

tests/test_calc.py .F.                                                   [100%]

=================================== FAILURES ===================================
_________________________________ test_divide __________________________________

    def test_divide():
>       assert divide(4, 2) == 3
E       assert 2.0 == 3
E        +  where 2.0 = divide(4, 2)

tests/test_calc.py:9: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_divide - assert 2.0 == 3
ERROR tests/test_io.py - ModuleNotFoundError: No module named 'yaml'
==================== 1 failed, 2 passed, 1 error in 0.03s =====================
`;
    expect(failureLines(output)).toEqual([
      'FAILED tests/test_calc.py::test_divide - assert 2.0 == 3',
      "ERROR tests/test_io.py - ModuleNotFoundError: No module named 'yaml'",
    ]);
  });

  it('reads jest', () => {
    const output = ` FAIL  src/sum.test.js (5.123 s)
  sum
    ✓ adds 1 + 1 (2 ms)
    ✕ adds 1 + 2 to equal 4 (3 ms)

  ● sum › adds 1 + 2 to equal 4

    expect(received).toBe(expected) // Object.is equality

    Expected: 4
    Received: 3

      3 | describe('sum', () => {
      4 |   test('adds 1 + 2 to equal 4', () => {
    > 5 |     expect(sum(1, 2)).toBe(4);
        |                       ^

      at Object.toBe (src/sum.test.js:5:23)

 PASS  src/other.test.js
Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 3 passed, 4 total
Time:        0.512 s
Ran all test suites.
`;
    expect(failureLines(output)).toEqual(['FAIL src/sum.test.js', '✕ adds 1 + 2 to equal 4', '● sum › adds 1 + 2 to equal 4']);
  });

  it('reads go test', () => {
    const output = `=== RUN   TestAdd
--- FAIL: TestAdd (0.00s)
    calc_test.go:8: Add(1, 2) = 4; want 3
=== RUN   TestSub
--- PASS: TestSub (0.00s)
FAIL
FAIL\texample.com/calc\t0.002s
FAIL
`;
    expect(failureLines(output)).toEqual(['--- FAIL: TestAdd', 'FAIL example.com/calc']);
  });

  it('reads cargo: a compile error, then a failing test and its panic', () => {
    const build = `   Compiling calc v0.1.0 (/home/u/calc)
error[E0308]: mismatched types
 --> src/lib.rs:2:5
  |
1 | pub fn add(a: i32, b: i32) -> i32 {
  |                               --- expected \`i32\` because of return type
2 |     "three"
  |     ^^^^^^^ expected \`i32\`, found \`&str\`

For more information about this error, try \`rustc --explain E0308\`.
error: could not compile \`calc\` (lib) due to 1 previous error
`;
    expect(failureLines(build)).toEqual(['error[E0308]: mismatched types', 'error: could not compile `calc` (lib) due to 1 previous error']);
    const tests = `running 2 tests
test tests::adds ... ok
test tests::subtracts ... FAILED

failures:

---- tests::subtracts stdout ----
thread 'tests::subtracts' panicked at src/lib.rs:14:9:
assertion \`left == right\` failed
  left: 0
 right: 2
note: run with \`RUST_BACKTRACE=1\` environment variable to display a backtrace


failures:
    tests::subtracts

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass \`--lib\`
`;
    expect(failureLines(tests)).toEqual([
      'test tests::subtracts ... FAILED',
      "thread 'tests::subtracts' panicked at src/lib.rs:14:9:",
      'error: test failed, to rerun pass `--lib`',
    ]);
  });

  it('reads an uncaught exception, and the same failure with another duration once', () => {
    expect(failureLines('node:internal/x\n    throw err;\nTypeError: Cannot read properties of undefined (reading \'x\')\n    at main (/a.js:3:1)\n')).toEqual([
      "TypeError: Cannot read properties of undefined (reading 'x')",
    ]);
    expect(failureLines('✗ checks the clock (1.2s)\n✗ checks the clock (0.9s)\n')).toEqual(['✗ checks the clock']);
  });
});

describe('failureLines', () => {
  it('gives the last non-empty line, digits kept, when no line names a failure', () => {
    expect(failureLines('building...\n  make: *** [all] Stopped at step 3  \n\n')).toEqual(['make: *** [all] Stopped at step 3']);
  });

  it('gives nothing for empty output', () => {
    expect(failureLines('')).toEqual([]);
    expect(failureLines('\n  \n')).toEqual([]);
  });

  it('keeps at most limit lines, in order, each once', () => {
    const output = Array.from({ length: 30 }, (_, index) => `not ok ${index + 1} - test ${index % 25}`).join('\n');
    const lines = failureLines(output);
    expect(lines).toHaveLength(20);
    expect(lines[0]).toBe('not ok - test 0');
    expect(lines[19]).toBe('not ok - test 19');
    expect(failureLines(output, 3)).toEqual(['not ok - test 0', 'not ok - test 1', 'not ok - test 2']);
    expect(failureLines(`${output}\nnot ok 31 - test 0`, 100)).toHaveLength(25);
  });

  it('cuts a very long failure line, and stays quick on a huge one', () => {
    const huge = `Error: ${'A'.repeat(1_000_000)}`;
    const [line] = failureLines(huge);
    expect(line?.length).toBe(300);
    expect(line?.endsWith('…')).toBe(true);
    expect(failureLines(`${'B'.repeat(1_000_000)}Error: late\n`)).toHaveLength(1);
  });
});

describe('outputTail', () => {
  it('keeps the last non-empty lines', () => {
    expect(outputTail('a\n\nb\n  \nc\nd\n', 2)).toBe('c\nd');
    expect(outputTail('a\nb\n')).toBe('a\nb');
    expect(outputTail('')).toBe('');
    expect(outputTail('a\nb', 0)).toBe('');
  });
});
