import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../model/messages.js';
import { isShrunkOutput, shrinkToolOutput, unshrunkEnd } from './reading/compaction-protocol.js';
import { createPlannerSession, goalWith, PLANNER_TOOL_NAMES, range, testNameFor } from './testing/planner-tools.js';
import { DEFAULT_SIM_OPTIONS } from './sim-options.js';
import { simTurn } from './sim-turn.js';
import { copyExample, driveWorker, EXAMPLE_DIR, projectTestsPass, removeExampleCopies, WORKER_TOOL_NAMES } from './testing/tool-executor.js';

const goal = readFileSync(join(EXAMPLE_DIR, 'GOAL.md'), 'utf8');
const padTask = readFileSync(join(EXAMPLE_DIR, 'tasks/01-pad.md'), 'utf8');

afterEach(removeExampleCopies);

/** What colony does before compacting: every tool result but those of the last `recent` messages shrunk. */
function shrinkOld(messages: readonly Message[], recent: number): Message[] {
  return messages.map((message, index) =>
    message.role === 'tool' && index < messages.length - recent ? { ...message, content: shrinkToolOutput(message.content) } : message,
  );
}

/** Filler a real harness adds to results (notices, overlaps, long test reports), so there is something to shrink. */
const FILLER = Array.from({ length: 30 }, (_, line) => `# filler line ${line} of a long result, as real tools give`).join('\n');

/** A test report of 40 passing tests with the failing ones in the middle, the way node:test prints TAP. */
function longReport(failing: readonly string[]): string {
  const passing = (from: number): string[] => Array.from({ length: 20 }, (_, index) => `ok ${from + index} - some other test ${from + index}`);
  const failed = failing.map((name, index) => `not ok ${21 + index} - ${name}`);
  const status = failing.length > 0 ? 'exit code: 1' : 'exit code: 0';
  const tail = [`# tests ${40 + failing.length}`, `# pass 40`, `# fail ${failing.length}`];
  return [status, '', 'TAP version 13', ...passing(1), ...failed, ...passing(21 + failing.length), ...tail].join('\n');
}

describe('shrinkToolOutput', () => {
  it('keeps the first and last 200 characters around a line that says how much is left out', () => {
    const content = `${'a'.repeat(300)}${'b'.repeat(300)}`;
    const shrunk = shrinkToolOutput(content);
    expect(shrunk).toBe(`${'a'.repeat(200)}\n[... 200 characters omitted by colony to save context; the full output is in the run's log ...]\n${'b'.repeat(200)}`);
    expect(isShrunkOutput(shrunk)).toBe(true);
    expect(shrinkToolOutput('short')).toBe('short');
    expect(isShrunkOutput('[... 12 characters omitted ...]')).toBe(false);
    const lines = Array.from({ length: 60 }, (_, index) => `line ${index}`).join('\n');
    expect(unshrunkEnd(shrinkToolOutput(lines))).toBe(lines.split('\n').slice(-25).join('\n'));
    expect(unshrunkEnd(lines)).toBe(lines);
  });
});

describe('the sim planner with old tool results shrunk', () => {
  it('gives the same answer at every turn: task ids and verdicts are on the first lines', () => {
    let runs = 0;
    const runCommand = (): string => (runs++ === 0 ? longReport([testNameFor('src/b/b1.js')]) : longReport([]));
    const session = createPlannerSession({ brief: goalWith([...range('src/a/a', 6), ...range('src/b/b', 4)]), runCommand });
    const pad = (): void => {
      for (const message of session.messages) {
        if (message.role === 'tool' && message.toolName === 'create_task' && !message.content.includes('filler')) {
          Object.assign(message, { content: `${message.content}\nIts handoff will arrive as a message in this conversation when it ends.\n${FILLER}` });
        }
      }
    };
    let shrunkSeen = 0;
    for (let turn = 0; turn < 60 && session.finishes.length === 0; turn += 1) {
      pad();
      const shrunk = shrinkOld(session.messages, 6);
      shrunkSeen = Math.max(shrunkSeen, shrunk.filter((message) => message.role === 'tool' && isShrunkOutput(message.content)).length);
      const expected = simTurn(session.messages, PLANNER_TOOL_NAMES, DEFAULT_SIM_OPTIONS);
      expect(simTurn(shrunk, PLANNER_TOOL_NAMES, DEFAULT_SIM_OPTIONS)).toMatchObject({ text: expected.text, toolCalls: expected.toolCalls });
      const answer = session.turn();
      if (answer.toolCalls.length > 0) continue;
      const next = session.openTasks()[0];
      if (next === undefined) break;
      session.handOff(next.id, { status: 'done', summary: `Built ${next.title}.` });
    }
    expect(shrunkSeen).toBeGreaterThanOrEqual(10);
    expect(session.tasks.some((task) => task.title === 'Fix src/b/b1.js: its tests fail on main')).toBe(true);
    expect(session.finishes.at(-1)).toMatchObject({ status: 'done' });
  });
});

describe('the sim worker with old tool results shrunk', () => {
  it('reads the index again rather than trusting a shrunk read, and finishes with a working tree', () => {
    const dir = copyExample();
    const indexPath = join(dir, 'src/index.js');
    writeFileSync(indexPath, `${readFileSync(indexPath, 'utf8')}${FILLER.replace(/^#/gm, '//')}\n`);
    const run = driveWorker({
      dir,
      task: goal,
      options: { ...DEFAULT_SIM_OPTIONS, bug: 1 },
      beforeTurn: (messages) => messages.splice(0, messages.length, ...shrinkOld(messages, 4)),
    });
    expect(run.handoff?.status).toBe('done');
    expect(projectTestsPass(dir)).toBe(true);
    const index = readFileSync(indexPath, 'utf8');
    expect(index).not.toContain('omitted by colony');
    expect(index.split('\n').filter((line) => line.startsWith('export * from'))).toHaveLength(6);
    const indexReads = run.executed.filter((each) => each.call.name === 'read_file' && each.call.input.includes('src/index.js'));
    expect(indexReads.length).toBeGreaterThan(1);
    const failedRuns = run.executed.filter((each) => each.call.name === 'run_command' && each.content.startsWith('exit code: 1'));
    expect(failedRuns.length).toBeGreaterThan(0);
    expect(String(run.handoff?.evidence)).toMatch(/^\$ node --test\nexit code: 0\n/);
    expect(String(run.handoff?.evidence)).not.toContain('omitted by colony');
  });

  it('decides from a shrunk index read to read it again instead of editing it', () => {
    const dir = copyExample();
    const indexPath = join(dir, 'src/index.js');
    writeFileSync(indexPath, `${readFileSync(indexPath, 'utf8')}${FILLER.replace(/^#/gm, '//')}\n`);
    const run = driveWorker({ dir, task: padTask, options: DEFAULT_SIM_OPTIONS, maxTurns: 3 });
    // list_dir, read the index, write the module and its test: next it would edit the index.
    const next = simTurn(run.messages, WORKER_TOOL_NAMES, DEFAULT_SIM_OPTIONS);
    expect(next.toolCalls.map((call) => call.name)).toEqual(['edit_file']);
    const shrunk = simTurn(shrinkOld(run.messages, 2), WORKER_TOOL_NAMES, DEFAULT_SIM_OPTIONS);
    expect(shrunk.toolCalls).toEqual([{ id: 'call_3_0', name: 'read_file', input: JSON.stringify({ path: 'src/index.js' }) }]);
    expect(shrunk.text).toBe('Re-reading src/index.js before I change it.');
  });
});
