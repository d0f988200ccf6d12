import { describe, expect, it } from 'vitest';
import { followRun } from '../../observe/replay/run-reader.js';
import { openScriptedRun } from '../../observe/testing/scripted-run.js';
import { detailLines } from './detail-lines.js';

function liveWorker() {
  const { store, run } = openScriptedRun();
  run.startAgent('worker-1', 'worker', 'task-1', 'Write the lexer', { agentId: 'planner-root', taskId: 'task-root' });
  run.step('worker-1', 1, 'read_file', { path: 'src/lexer.ts' }, 'export function lex(source: string): Token[] { return []; }');
  run.append('worker-1', { type: 'tool.started', data: { step: 2, callId: 'worker-1-call-2', name: 'run_command', input: '{"command":"npm test"}' } });
  return { run, followed: followRun(store) };
}

describe('an agent page\'s lines', () => {
  it('follow a live agent read again: a call that ended shows its output, new entries come after', async () => {
    const { run, followed } = liveWorker();
    const before = detailLines('transcript', await followed.transcript('worker-1'), null, 120);
    expect(before.at(-1)).toMatch(/▶ run_command .*running/);
    run.append('worker-1', { type: 'tool.ended', data: { step: 2, callId: 'worker-1-call-2', name: 'run_command', ok: true, output: 'Tests: 3 passed', durationMs: 2_000 } });
    run.step('worker-1', 3, 'read_file', { path: 'README.md' }, 'The lexer');
    const after = detailLines('transcript', await followed.transcript('worker-1'), null, 120);
    expect(after.slice(0, before.length - 1)).toEqual(before.slice(0, -1));
    expect(after[before.length - 1]).toMatch(/▶ run_command .*ok in 2\.0s/);
    expect(after).toContain('  │ Tests: 3 passed');
    expect(after.at(-1)).toBe('  │ The lexer');
  });

  it('are wrapped again when the width changes', async () => {
    const { followed } = liveWorker();
    const transcript = await followed.transcript('worker-1');
    const wide = detailLines('transcript', transcript, null, 120);
    const narrow = detailLines('transcript', transcript, null, 20);
    expect(narrow.length).toBeGreaterThan(wide.length);
    expect(narrow.every((line) => line.length <= 20)).toBe(true);
    expect(narrow.join('')).toBe(wide.join(''));
    expect(detailLines('transcript', transcript, null, 120)).toEqual(wide);
  });
});
