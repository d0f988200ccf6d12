import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../model/messages.js';
import { compact, keepCounts, stateOf } from '../testing/compaction.js';
import { REFLECTION_REMINDER_OPENING, SCRATCHPAD_REMINDER_OPENING } from '../../protocol/message-openings.js';
import { parseScenario } from '../scenario/scenario.js';
import { renderModuleSource, renderModuleTest, testPathFor } from '../scenario/module-render.js';
import type { SimOptions } from '../sim-options.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { simTurn } from '../sim-turn.js';
import type { DriveOptions, DrivenRun } from '../testing/tool-executor.js';
import { copyExample, driveWorker, EXAMPLE_DIR, projectTestsPass, removeExampleCopies, WORKER_TOOL_NAMES } from '../testing/tool-executor.js';

const goal = readFileSync(join(EXAMPLE_DIR, 'GOAL.md'), 'utf8');
const padTask = readFileSync(join(EXAMPLE_DIR, 'tasks/01-pad.md'), 'utf8');
const chunkTask = readFileSync(join(EXAMPLE_DIR, 'tasks/04-chunk.md'), 'utf8');

afterEach(removeExampleCopies);

function answerOf(messages: readonly Message[], options: SimOptions): { text: string; toolCalls: unknown } {
  const answer = simTurn(messages, WORKER_TOOL_NAMES, options);
  return { text: answer.text, toolCalls: answer.toolCalls };
}

/** Main gained the chunk module while this worker built its own: the first merge conflicts in the index. */
function conflictOnFirstMerge(dir: string): NonNullable<DriveOptions['onMerge']> {
  const chunk = parseScenario(chunkTask);
  if (!chunk.ok) throw new Error(chunk.error);
  return (attempt) => {
    if (attempt > 1) return { content: 'merged into main as def456', isError: false };
    for (const module of chunk.scenario.modules) {
      mkdirSync(dirname(join(dir, module.path)), { recursive: true });
      writeFileSync(join(dir, module.path), renderModuleSource(module, { buggy: false }));
      writeFileSync(join(dir, testPathFor(module.path)), renderModuleTest(module));
    }
    const index = readFileSync(join(dir, 'src/index.js'), 'utf8').split('\n');
    const mine = index.filter((line) => line.startsWith('export'));
    writeFileSync(join(dir, 'src/index.js'), [index[0], '<<<<<<< main', "export * from './list/chunk.js';", '=======', ...mine, '>>>>>>> worker', ''].join('\n'));
    return { content: 'Could not merge: main changed the same lines.\nconflicts in files: src/index.js\nResolve the conflict markers and call merge_to_main again.', isError: true };
  };
}

/** A worker's run with wrong first attempts, malformed calls, a failing step, a merge conflict and both reminders. */
function eventfulRun(options: SimOptions, beforeTurn?: DriveOptions['beforeTurn']): DrivenRun {
  const dir = copyExample();
  let failures = 0;
  return driveWorker({
    dir,
    task: goal,
    options,
    onMerge: conflictOnFirstMerge(dir),
    failCall: (call, args) => (call.name === 'write_file' && args.path === 'src/text/case.js' && failures++ === 0 ? 'disk full' : null),
    interject: (turn) =>
      turn === 4 ? `${SCRATCHPAD_REMINDER_OPENING} write down where you stand.` : turn === 7 ? `${REFLECTION_REMINDER_OPENING} check your work.` : null,
    ...(beforeTurn === undefined ? {} : { beforeTurn }),
  });
}

const EVENTFUL: SimOptions = { ...DEFAULT_SIM_OPTIONS, seed: 3, bug: 0.5, malformed: 0.2 };
/** A run drives the worker through real writes and real test runs: about ten seconds, several times that on a loaded machine. */
const REAL_RUN_TIMEOUT_MS = 120_000;

describe('a compacted worker conversation', () => {
  it('gives the same next answer, compacted once and twice, before every turn of a real run', () => {
    const run = eventfulRun(EVENTFUL);
    expect(run.handoff?.status).toBe('done');
    const names = run.executed.map((each) => each.call.name);
    expect(names).toContain('write_scratchpad');
    expect(run.executed.some((each) => each.rejected !== null)).toBe(true);
    expect(run.executed.filter((each) => each.call.name === 'merge_to_main')).toHaveLength(2);
    let checked = 0;
    run.messages.forEach((message, position) => {
      if (message.role !== 'assistant') return;
      const before = run.messages.slice(0, position);
      const expected = { text: message.text, toolCalls: message.toolCalls };
      expect(answerOf(before, EVENTFUL)).toEqual(expected);
      for (const keep of keepCounts(before.length)) {
        const once = compact(before, keep, EVENTFUL);
        expect(once.toolCalls).toBe(0);
        expect(answerOf(once.compacted, EVENTFUL)).toEqual(expected);
        for (const again of keepCounts(once.compacted.length).filter((count) => count <= once.compacted.length - 3)) {
          expect(answerOf(compact(once.compacted, again, EVENTFUL).compacted, EVENTFUL)).toEqual(expected);
          checked += 1;
        }
      }
    });
    expect(checked).toBeGreaterThan(300);
  }, REAL_RUN_TIMEOUT_MS);

  it('finishes with the same handoff and the same tree when compacted every few turns', () => {
    const plain = eventfulRun(EVENTFUL);
    const compacted = eventfulRun(EVENTFUL, (messages, turn) => {
      if (turn % 3 !== 2) return;
      messages.splice(0, messages.length, ...compact(messages, 2, EVENTFUL).compacted);
    });
    expect(withoutTimings(compacted.handoff)).toEqual(withoutTimings(plain.handoff));
    expect(withoutTimings(compacted.executed.map((each) => each.call))).toEqual(withoutTimings(plain.executed.map((each) => each.call)));
    expect(compacted.turns).toBe(plain.turns);
    expect(compacted.messages.length).toBeLessThan(plain.messages.length / 2);
  }, REAL_RUN_TIMEOUT_MS);

  it('summarises in words and keeps no file it can write again', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: DEFAULT_SIM_OPTIONS, maxTurns: 5 });
    const { summary } = compact(run.messages, 0);
    const lines = summary.split('\n');
    expect(lines[0]).toBe('Task: build src/text/pad.js (padLeft, padRight), as the colony-spec in the first message lists them.');
    expect(lines[1]).toMatch(/^Done: 1 of 1 module written, 1 re-exported from src\/index\.js, the last test run passed, not merged yet; files changed: /);
    expect(lines[2]).toBe('In flight: nothing.');
    expect(lines[3]).toBe('Open threads: none.');
    expect(lines[4]).toBe('Next step: The tests pass. Merging into main.');
    const state = stateOf(summary);
    expect(state).toMatchObject({ role: 'worker', turn: 5, abandoned: false });
    const written = run.messages.flatMap((message) => (message.role === 'assistant' ? message.toolCalls : [])).filter((call) => call.name === 'write_file');
    const source = (JSON.parse(written[0]?.input ?? '{}') as { content: string }).content;
    expect(source.length).toBeGreaterThan(100);
    expect(JSON.stringify(state)).not.toContain(source.slice(0, 60));
    expect(JSON.stringify(state).length).toBeLessThan(JSON.stringify(run.messages).length / 3);
    expect(projectTestsPass(dir)).toBe(true);
  });

  it('carries an abandoned task as abandoned', () => {
    const run = driveWorker({ dir: copyExample(), task: padTask, options: { ...DEFAULT_SIM_OPTIONS, crash: 1 } });
    const { compacted, summary } = compact(run.messages, 0, { ...DEFAULT_SIM_OPTIONS, crash: 1 });
    expect(stateOf(summary)).toMatchObject({ abandoned: true });
    expect(lines(summary).at(-1)).toBe('Next step: none: I gave up on this task.');
    expect(simTurn(compacted, WORKER_TOOL_NAMES, { ...DEFAULT_SIM_OPTIONS, crash: 0 }).toolCalls).toEqual([]);
  });
});

/** The value as JSON with the test runner's timings blanked: those come from the machine, not the sim. */
function withoutTimings(value: unknown): string {
  return JSON.stringify(value).replace(/duration_ms:? [\d.]+/g, 'duration_ms');
}

function lines(summary: string): string[] {
  return summary.split('\n\n```sim-state')[0]?.split('\n') ?? [];
}
