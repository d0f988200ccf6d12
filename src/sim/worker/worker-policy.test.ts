import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../model/messages.js';
import type { SimOptions } from '../sim-options.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import type { DrivenRun } from '../testing/tool-executor.js';
import {
  copyExample,
  driveWorker,
  EXAMPLE_DIR,
  projectTestsPass,
  REMINDER,
  removeExampleCopies,
  WORKER_TOOL_NAMES,
} from '../testing/tool-executor.js';
import { ABANDON_TEXT } from './worker-conversation.js';
import { simLatencyMs } from '../sim-turn.js';
import { simWorkerTurn } from './worker-policy.js';

const goal = readFileSync(join(EXAMPLE_DIR, 'GOAL.md'), 'utf8');
const padTask = readFileSync(join(EXAMPLE_DIR, 'tasks/01-pad.md'), 'utf8');

afterEach(removeExampleCopies);

function options(overrides: Partial<SimOptions> = {}): SimOptions {
  return { ...DEFAULT_SIM_OPTIONS, ...overrides };
}

/** The calls a run made, with the test runner's timings blanked: those come from the machine, not the sim. */
function callsOf(run: DrivenRun): { id: string; name: string; input: string }[] {
  return run.executed.map(({ call }) => ({ ...call, input: call.input.replace(/duration_ms:? [\d.]+/g, 'duration_ms') }));
}

function testRunResults(run: DrivenRun): string[] {
  return run.executed.filter((each) => each.call.name === 'run_command').map((each) => each.content.split('\n')[0] ?? '');
}

describe('simWorkerTurn', () => {
  it('builds the whole goal, merges and hands off done with real evidence', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: goal, options: options() });
    expect(run.handoff?.status).toBe('done');
    expect(projectTestsPass(dir)).toBe(true);
    const index = readFileSync(join(dir, 'src/index.js'), 'utf8');
    expect(index.split('\n').filter((line) => line.startsWith('export * from'))).toHaveLength(6);
    expect(run.executed[0]?.call.name).toBe('list_dir');
    expect(run.executed[1]?.call).toMatchObject({ name: 'read_file', input: JSON.stringify({ path: 'src/index.js' }) });
    expect(String(run.handoff?.evidence)).toMatch(/^\$ node --test\nexit code: 0\n[\s\S]*# fail 0/);
    expect(run.handoff?.notes).toContain(
      'merge_to_main: merged into main as abc123',
    );
    const merge = run.executed.find((each) => each.call.name === 'merge_to_main');
    expect(merge?.call.input).toContain('src/text/pad.js');
    const ids = run.messages.flatMap((message) => (message.role === 'assistant' ? message.toolCalls.map((call) => call.id) : []));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('with bug=1 the first test run fails, and it rewrites the module and says so', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: options({ bug: 1 }) });
    const results = testRunResults(run);
    expect(results[0]).toBe('exit code: 1');
    expect(results.at(-1)).toBe('exit code: 0');
    expect(run.handoff?.status).toBe('done');
    const notes = (run.handoff?.notes as string[]).join('\n');
    expect(notes).toContain('My first version of src/text/pad.js was wrong');
    expect(notes).toContain('padLeft("a", 3, "-") returns "--a"');
    expect(projectTestsPass(dir)).toBe(true);
  });

  it('with bug=1 and lie=1 it skips the fix, merges the wrong module and claims done with made-up evidence', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: options({ bug: 1, lie: 1 }) });
    expect(testRunResults(run)).toEqual(['exit code: 1']);
    expect(run.executed.filter((each) => each.call.name === 'write_file' && each.call.input.includes('"src/text/pad.js"'))).toHaveLength(1);
    expect(run.executed.filter((each) => each.call.name === 'merge_to_main')).toHaveLength(1);
    expect(run.handoff?.status).toBe('done');
    expect(String(run.handoff?.evidence)).toMatch(/^\$ node --test\nexit code: 0\n[\s\S]*ℹ fail 0/);
    expect((run.handoff?.notes as string[]).join('\n')).not.toContain('was wrong');
    expect(projectTestsPass(dir)).toBe(false);
  });

  it('does not lie on a retried task, whose brief says what went wrong before, nor when its first attempt passed', () => {
    const retried = driveWorker({
      dir: copyExample(),
      task: `${padTask}\n\n## Earlier attempts\n\nThis task was tried before. What those attempts handed off:\n\n### Task t1\nstatus: done`,
      options: options({ bug: 1, lie: 1 }),
    });
    expect(testRunResults(retried)).toEqual(['exit code: 1', 'exit code: 0']);
    expect(retried.handoff?.status).toBe('done');
    const dir = copyExample();
    const right = driveWorker({ dir, task: padTask, options: options({ lie: 1 }) });
    expect(testRunResults(right)).toEqual(['exit code: 0']);
    expect(String(right.handoff?.evidence)).toMatch(/exit code: 0\n[\s\S]*# pass/);
    expect(projectTestsPass(dir)).toBe(true);
  });

  it('with malformed=0.3 it still finishes, and every bad call is one of the known kinds', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: goal, options: options({ seed: 3, malformed: 0.3 }) });
    expect(run.handoff?.status).toBe('done');
    expect(projectTestsPass(dir)).toBe(true);
    const rejected = run.executed.filter((each) => each.rejected !== null);
    expect(rejected.length).toBeGreaterThan(2);
    for (const each of rejected) expect(['invalid-json', 'unknown-tool', 'missing-field', 'wrong-type']).toContain(each.rejected);
    expect(new Set(rejected.map((each) => each.rejected)).size).toBeGreaterThan(1);
    const unknown = run.executed.filter((each) => each.rejected === 'unknown-tool').map((each) => each.call.name);
    for (const name of unknown) expect(WORKER_TOOL_NAMES as readonly string[]).not.toContain(name);
  });

  it('with crash=1 it abandons after the first turn and keeps answering with text only', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: options({ crash: 1 }) });
    expect(run.handoff).toBeNull();
    const answers = run.messages.filter((message) => message.role === 'assistant');
    expect(answers[0]?.toolCalls).toHaveLength(1);
    expect(answers.slice(1)).toHaveLength(3);
    for (const answer of answers.slice(1)) expect(answer).toMatchObject({ text: ABANDON_TEXT, toolCalls: [] });
    expect(run.messages.filter((message) => message.role === 'user' && message.content === REMINDER)).toHaveLength(3);
  });

  it('continues normally after a reminder when it has not abandoned', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: options(), interject: (turn) => (turn === 3 ? REMINDER : null) });
    expect(run.handoff?.status).toBe('done');
    expect(projectTestsPass(dir)).toBe(true);
  });

  it('is deterministic: same seed, same calls; another seed with faults, other calls', () => {
    const faults = { bug: 0.5, malformed: 0.3 };
    const first = callsOf(driveWorker({ dir: copyExample(), task: padTask, options: options({ seed: 7, ...faults }) }));
    const again = callsOf(driveWorker({ dir: copyExample(), task: padTask, options: options({ seed: 7, ...faults }) }));
    const other = callsOf(driveWorker({ dir: copyExample(), task: padTask, options: options({ seed: 8, ...faults }) }));
    expect(first.some((call) => call.name === 'submit_handoff')).toBe(true);
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
  });

  it('gives the same answer for the same conversation, with no state between calls', () => {
    const messages: Message[] = [{ role: 'user', content: padTask }];
    const noisy = options({ seed: 11, malformed: 0.5, crash: 0.5, tokens: 40 });
    expect(simWorkerTurn(messages, WORKER_TOOL_NAMES, noisy)).toEqual(simWorkerTurn(messages, WORKER_TOOL_NAMES, noisy));
  });

  it('reports usage from the characters in and out, plus the extra tokens', () => {
    const messages: Message[] = [{ role: 'user', content: padTask }];
    const plain = simWorkerTurn(messages, WORKER_TOOL_NAMES, options());
    const padded = simWorkerTurn(messages, WORKER_TOOL_NAMES, options({ tokens: 250 }));
    expect(plain.usage.inputTokens).toBe(Math.ceil(padTask.length / 4));
    expect(padded.usage.outputTokens).toBe(plain.usage.outputTokens + 250);
    expect(plain.toolCalls).toEqual([{ id: 'call_0_0', name: 'list_dir', input: '{"path":"."}' }]);
  });
});

describe('simLatencyMs', () => {
  it('is zero by default, seeded, and within the range', () => {
    const messages: Message[] = [{ role: 'user', content: padTask }];
    expect(simLatencyMs(options(), messages)).toBe(0);
    const ranged = options({ seed: 5, latencyMs: { min: 50, max: 400 } });
    const values = [0, 1, 2, 3, 4, 5].map((turn) =>
      simLatencyMs(ranged, [...messages, ...Array.from({ length: turn }, (): Message => ({ role: 'assistant', text: '', toolCalls: [] }))]),
    );
    for (const value of values) expect(value).toBeGreaterThanOrEqual(50);
    for (const value of values) expect(value).toBeLessThanOrEqual(400);
    expect(new Set(values).size).toBeGreaterThan(1);
    expect(simLatencyMs(ranged, messages)).toBe(values[0]);
    expect(simLatencyMs(options({ latencyMs: { min: 120, max: 120 } }), messages)).toBe(120);
  });
});
