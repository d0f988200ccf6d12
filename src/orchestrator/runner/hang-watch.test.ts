import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../events/event-types.js';
import { createHangWatch } from './hang-watch.js';

function eventAt(ts: number, type: 'tool.started' | 'tool.ended' | 'agent.parked' | 'agent.unparked', agentId = 'worker-a'): RecordedEvent {
  const base = { v: 1, id: `e${ts}`, runId: 'run-1', agentId, ts };
  if (type === 'agent.parked') return { ...base, type, data: { step: 1, kind: 'rate-limited', message: '429', attempts: 3, waitMs: 1_000 } };
  if (type === 'agent.unparked') return { ...base, type, data: { step: 1, parkedMs: 1_000 } };
  if (type === 'tool.ended') return { ...base, type, data: { step: 1, callId: 'c1', name: 'run_command', ok: true, output: 'ok', durationMs: 5 } };
  return { ...base, type, data: { step: 1, callId: 'c1', name: 'run_command', input: '{}' } };
}

describe('the hang watch', () => {
  it('reports a worker silent past the limit once, and not one that keeps recording', () => {
    let now = 0;
    const watch = createHangWatch(1_000, () => now);
    watch.watch('task-quiet');
    watch.watch('task-busy');
    now = 900;
    watch.saw('task-busy', eventAt(900, 'tool.ended', 'worker-b'));
    expect(watch.check()).toEqual([]);
    now = 1_500;
    const hangs = watch.check();
    expect(hangs).toEqual([{ taskId: 'task-quiet', agentId: '', silentMs: 1_500, limitMs: 1_000 }]);
    expect(watch.hangOf('task-quiet')).toEqual(hangs[0]);
    expect(watch.hangOf('task-busy')).toBeNull();
    // Reported once, however long it stays silent.
    now = 5_000;
    expect(watch.check().map((hang) => hang.taskId)).toEqual(['task-busy']);
  });

  it('does not judge a worker parked on its provider until it resumes', () => {
    let now = 0;
    const watch = createHangWatch(1_000, () => now);
    watch.watch('task-1');
    watch.saw('task-1', eventAt(100, 'agent.parked'));
    now = 10_000;
    expect(watch.check()).toEqual([]);
    watch.saw('task-1', eventAt(10_000, 'agent.unparked'));
    now = 10_500;
    expect(watch.check()).toEqual([]);
    now = 11_001;
    expect(watch.check()).toEqual([{ taskId: 'task-1', agentId: 'worker-a', silentMs: 1_001, limitMs: 1_000 }]);
  });

  it('gives a worker running a tool call as long as a command may take', () => {
    let now = 0;
    const watch = createHangWatch(1_000, () => now);
    watch.watch('task-1');
    watch.saw('task-1', eventAt(0, 'tool.started'));
    now = 30 * 60_000;
    expect(watch.check()).toEqual([]);
    now = 35 * 60_000;
    expect(watch.check()).toMatchObject([{ taskId: 'task-1', limitMs: 35 * 60_000 }]);
  });

  it("gives a worker whose acceptance checks run as long as they may take, and judges it again once they ended", () => {
    let now = 0;
    const watch = createHangWatch(1_000, () => now);
    watch.watch('task-1');
    const base = { v: 1, runId: 'run-1', agentId: 'worker-a' };
    watch.saw('task-1', { ...base, id: 'e1', ts: 0, type: 'acceptance.started', data: { taskId: 'task-1', commit: 'c'.repeat(40), commands: ['node --test'] } });
    now = 30 * 60_000;
    expect(watch.check()).toEqual([]);
    const checked = { taskId: 'task-1', claimed: 'done' as const, commit: 'c'.repeat(40), passed: true, skipped: null, results: [] };
    watch.saw('task-1', { ...base, id: 'e2', ts: now, type: 'acceptance.checked', data: checked });
    now += 1_001;
    expect(watch.check()).toEqual([{ taskId: 'task-1', agentId: 'worker-a', silentMs: 1_001, limitMs: 1_000 }]);
  });

  it('excuses every worker while colony itself holds them up', () => {
    let now = 0;
    const watch = createHangWatch(1_000, () => now);
    watch.watch('task-1');
    now = 900;
    watch.excuseAll();
    now = 1_800;
    expect(watch.check()).toEqual([]);
    now = 1_901;
    expect(watch.check().map((hang) => hang.silentMs)).toEqual([1_001]);
  });

  it('forgets a task that ended', () => {
    let now = 0;
    const watch = createHangWatch(1_000, () => now);
    watch.watch('task-1');
    watch.forget('task-1');
    now = 2_000;
    expect(watch.check()).toEqual([]);
    expect(watch.hangOf('task-1')).toBeNull();
  });
});
