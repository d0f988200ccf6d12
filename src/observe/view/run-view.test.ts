import { describe, expect, it } from 'vitest';
import type { EventQuery } from '../../store/events/event-store.js';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';
import { buildAgentTranscript } from '../replay/agent-transcript.js';
import { openReplay } from '../replay/replay-run.js';
import { followRun } from '../replay/run-reader.js';
import { foldRunStatus } from '../status/run-status.js';
import { createRunViewFold } from './run-view.js';
import { greenAdvanced, greenBisected, greenChecked } from '../testing/green-events.js';
import { SCRIPT_T0, scriptRun, type ScriptedRun } from '../testing/scripted-run.js';

function openLog() {
  const clock = { now: SCRIPT_T0 };
  const store = createMemoryEventStore({ now: () => clock.now });
  return { store, run: scriptRun(store, clock) };
}

/** A root planner with two workers: one done with a commit, one in the middle of `npm test`. */
function twoWorkers(run: ScriptedRun): void {
  run.startRun('Build the parser');
  run.startAgent('planner-root', 'root-planner', 'task-root', 'Build the parser', null);
  const parent = { agentId: 'planner-root', taskId: 'task-root' };
  run.startAgent('worker-a', 'worker', 'task-a', 'Write the lexer', parent);
  run.startAgent('worker-b', 'worker', 'task-b', 'Write the printer', parent);
  run.step('worker-a', 1, 'write_file', { path: 'src/lexer.ts', content: 'x' }, 'wrote src/lexer.ts');
  run.tick(61_000);
  run.step('worker-a', 2, 'run_command', { command: 'npm test' }, 'FAIL lexer.test.ts', false);
  run.land('worker-a', 'c'.repeat(40), ['src/lexer.ts']);
  run.handOff('worker-a', 'task-a', 'task-root', 'done', 'The lexer is in', 2);
  run.tick(5_000);
  run.append('worker-b', { type: 'tool.started', data: { step: 1, callId: 'b-1', name: 'run_command', input: '{"command":"npm test -- printer"}' } });
}

describe('the run view', () => {
  it('shows each agent\'s call in flight, tasks by status from the log, and the handoffs', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    const fold = createRunViewFold();
    for (const event of await store.read()) fold.add(event);
    const view = fold.snapshot(run.now + 2_000);
    if (view === null) throw new Error('no view');
    const byId = new Map(view.agents.map((agent) => [agent.id, agent]));
    expect(byId.get('worker-b')?.activity).toEqual({ kind: 'tool', name: 'run_command', detail: 'npm test -- printer', since: run.now });
    expect(byId.get('worker-a')?.activity).toBeNull();
    // After its handoff, a worker's acceptance commands run before it ends.
    run.append('worker-b', { type: 'tool.ended', data: { step: 1, callId: 'b-1', name: 'run_command', ok: true, output: 'pass', durationMs: 900 } });
    run.append('worker-b', { type: 'acceptance.started', data: { taskId: 'task-b', commit: 'c'.repeat(40), commands: ['npm test'] } });
    for (const event of await store.read({ afterSeq: fold.lastSeq })) fold.add(event);
    expect(fold.snapshot(run.now)?.agents.find((agent) => agent.id === 'worker-b')?.activity).toMatchObject({ kind: 'acceptance', detail: 'npm test' });
    expect(byId.get('worker-a')?.state).toBe('done');
    expect(view.status.tasks).toEqual({ total: 2, byStatus: { open: 0, running: 1, done: 1, partial: 0, blocked: 0, failed: 0 } });
    expect(view.status.handoffs.delivered).toBe(1);
    expect(view.handoffs.map((entry) => [entry.taskId, entry.handoff.summary])).toEqual([['task-a', 'The lexer is in']]);
    expect(view.errors.counts['tool-failure']).toBe(1);
    expect(view.errors.recent.at(-1)?.message).toBe('run_command: FAIL lexer.test.ts');
    expect(view.status.commits.landed).toBe(1);
  });

  it('records when each task closed, and forgets it when a task is released to run again', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    const closedAt = (fold: ReturnType<typeof createRunViewFold>) => Object.fromEntries((fold.snapshot(run.now)?.tasks ?? []).map((task) => [task.id, task.closedAt]));
    const fold = createRunViewFold();
    for (const event of await store.read()) fold.add(event);
    // worker-a handed off 61 s after the start; worker-b is still at work, and so is the root.
    expect(closedAt(fold)).toEqual({ 'task-root': null, 'task-a': SCRIPT_T0 + 61_000, 'task-b': null });
    run.append('system', { type: 'task.released', data: { taskId: 'task-a', reason: 'lease lost' } });
    for (const event of await store.read({ afterSeq: fold.lastSeq })) fold.add(event);
    expect(closedAt(fold)['task-a']).toBeNull();
  });

  it('counts throughput per minute, with quiet minutes as zeros', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    const fold = createRunViewFold();
    for (const event of await store.read()) fold.add(event);
    const view = fold.snapshot(run.now + 120_000);
    // 09:00 holds the first step, 09:01 the second and the commit, 09:02 and 09:03 nothing but worker-b's call.
    expect(view?.throughput.map((point) => [point.toolCalls, point.commits, point.modelCalls])).toEqual([
      [1, 0, 1],
      [2, 1, 1],
      [0, 0, 0],
      [0, 0, 0],
    ]);
  });

  it('keeps the tail bounded and leaves model requests out of it', async () => {
    const { store, run } = openLog();
    run.startRun('Long');
    run.startAgent('planner-root', 'root-planner', 'task-root', 'Long', null);
    for (let step = 1; step <= 40; step += 1) run.step('planner-root', step, 'read_file', { path: `f${step}` }, 'ok');
    const fold = createRunViewFold({ tailSize: 10 });
    for (const event of await store.read()) fold.add(event);
    const tail = fold.snapshot(run.now)?.tail ?? [];
    expect(tail).toHaveLength(10);
    expect(tail.some((line) => line.type === 'model.requested')).toBe(false);
    expect(tail.at(-1)?.seq).toBe(await store.lastSeq());
  });

  it('starts over when a newer run starts in the same log', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    const second = scriptRun(store, { now: run.now + 1_000 }, 'run-second');
    second.startRun('Second');
    second.startAgent('planner-2', 'root-planner', 'task-root-2', 'Second', null);
    const fold = createRunViewFold();
    for (const event of await store.read()) fold.add(event);
    const view = fold.snapshot(run.now + 2_000);
    expect(view?.status.run.id).toBe('run-second');
    expect(view?.agents.map((agent) => agent.id)).toEqual(['planner-2']);
    expect(view?.status.tasks.total).toBe(0);
    expect(view?.errors.counts['tool-failure']).toBe(0);
  });
});

describe('following a log', () => {
  it('reads a bounded number of events per catch-up and says when it has caught up', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    const followed = followRun(store);
    expect(await followed.catchUp(7)).toBe(7);
    expect(followed.caughtUp).toBe(false);
    const rest = await followed.catchUp();
    expect(followed.caughtUp).toBe(true);
    expect(7 + rest).toBe(await store.lastSeq());
    run.step('worker-b', 2, 'read_file', { path: 'README.md' }, 'hello');
    expect(await followed.catchUp()).toBe(4);
    expect(followed.view(run.now)?.agents.find((agent) => agent.id === 'worker-b')?.steps).toBe(2);
  });

  it('reads one agent\'s transcript: its task, its words, each tool call with its output', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    const transcript = await followRun(store).transcript('worker-a');
    expect(transcript.role).toBe('worker');
    expect(transcript.workspace).toBe('/srv/workspaces/worker-a');
    expect(transcript.landed).toEqual(['c'.repeat(40)]);
    const tools = transcript.entries.filter((entry) => entry.kind === 'tool');
    expect(tools.map((entry) => (entry.kind === 'tool' ? [entry.name, entry.ok, entry.output] : null))).toEqual([
      ['write_file', true, 'wrote src/lexer.ts'],
      ['run_command', false, 'FAIL lexer.test.ts'],
    ]);
    expect(transcript.handoffs.map((handoff) => handoff.summary)).toEqual(['The lexer is in']);
  });

  it('reads a transcript asked for again only as far as the agent logged since, and keeps it whole', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    let agentReads = 0;
    const followed = followRun({
      read: (query) => {
        if (query.agentId !== undefined) agentReads += 1;
        return store.read(query);
      },
    });
    const running = await followed.transcript('worker-b');
    expect(running.entries.at(-1)).toMatchObject({ kind: 'tool', ok: null });
    expect(await followed.transcript('worker-b')).toBe(running);
    run.append('worker-b', { type: 'tool.ended', data: { step: 1, callId: 'b-1', name: 'run_command', ok: true, output: 'pass', durationMs: 9_000 } });
    const ended = await followed.transcript('worker-b');
    expect(ended).not.toBe(running);
    expect(ended.entries).toEqual([...running.entries.slice(0, -1), { ...running.entries.at(-1), output: 'pass', ok: true, durationMs: 9_000 }]);
    expect(running.entries.at(-1)).toMatchObject({ ok: null });
    // Each ask is one read of what is new; another agent's page starts from its first event.
    expect(agentReads).toBe(3);
    expect((await followed.transcript('worker-a')).entries).toEqual(buildAgentTranscript('worker-a', await store.read()).entries);
    expect((await followed.transcript('worker-b')).entries).toEqual(ended.entries);
  });

  it('folds reads asked for at once one after another, each event once', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    // A store whose reads take a while, as one across a network does, so reads asked for at once would overlap.
    const slow = {
      read: async (query: EventQuery) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return store.read(query);
      },
    };
    const followed = followRun(slow);
    const folded = await Promise.all([followed.catchUp(7), followed.catchUp(), followed.catchUp()]);
    expect(folded).toEqual([7, (await store.lastSeq()) - 7, 0]);
    const [first, again] = await Promise.all([followed.transcript('worker-a'), followed.transcript('worker-a')]);
    expect(again).toBe(first);
    expect(first.entries).toEqual(buildAgentTranscript('worker-a', await store.read()).entries);
  });

  it('shows a tool call that has not ended as running', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    const entries = buildAgentTranscript('worker-b', await store.read()).entries;
    expect(entries.at(-1)).toMatchObject({ kind: 'tool', name: 'run_command', ok: null, output: null });
  });
});

describe('replaying a log', () => {
  it('shows the run as it stood at a moment, steps one event at a time, and ends where the log ends', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    run.tick(10_000);
    run.append('worker-b', { type: 'tool.ended', data: { step: 1, callId: 'b-1', name: 'run_command', ok: true, output: 'pass', durationMs: 9_000 } });
    run.handOff('worker-b', 'task-b', 'task-root', 'partial', 'Half the printer', 1);
    run.endRun('done');
    const opened = await openReplay(store);
    if (!opened.ok) throw new Error(opened.error);
    const replay = opened.replay;
    expect(replay.startsAt).toBe(SCRIPT_T0);
    expect(replay.endsAt).toBe(run.now);
    await replay.advanceTo(SCRIPT_T0 + 30_000);
    const early = replay.view();
    expect(early?.agents.map((agent) => [agent.id, agent.state])).toEqual([
      ['planner-root', 'running'],
      ['worker-a', 'running'],
      ['worker-b', 'running'],
    ]);
    expect((await replay.transcript('worker-a')).entries.filter((entry) => entry.kind === 'tool')).toHaveLength(1);
    const before = early?.lastSeq ?? 0;
    const stepped = await replay.step();
    expect(stepped?.seq).toBe(before + 1);
    await replay.advanceTo(replay.endsAt);
    expect(replay.finished).toBe(true);
    const end = replay.view();
    const whole = createRunViewFold();
    for (const event of await store.read()) whole.add(event);
    expect(end?.status).toEqual(whole.snapshot(run.now)?.status);
    expect(end?.status.run.state).toBe('done');
  });

  it('ends a run that never recorded its end at its last event, whatever other runs wrote after it', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    run.tick(3_000);
    run.append('system', { type: 'task.created', data: { taskId: 'task-c', parentTaskId: 'task-root', kind: 'worker', title: 'Last words', scope: null, retryOf: null } });
    const crashedAt = run.now;
    const later = scriptRun(store, { now: run.now + 60_000 }, 'run-later');
    later.startRun('Later');
    for (let step = 1; step <= 30; step += 1) later.step('planner-later', step, 'read_file', { path: 'x' }, 'ok');
    const opened = await openReplay(store, run.runId);
    if (!opened.ok) throw new Error(opened.error);
    expect(opened.replay.endsAt).toBe(crashedAt);
    await opened.replay.advanceTo(opened.replay.endsAt);
    expect(opened.replay.finished).toBe(true);
    expect(opened.replay.view()?.tasks.map((task) => task.id)).toContain('task-c');
  });

  it('folds at most the events asked for in one move, and stops its clock at the last of them', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    run.endRun('done');
    const opened = await openReplay(store);
    if (!opened.ok) throw new Error(opened.error);
    const replay = opened.replay;
    const before = replay.view()?.lastSeq ?? 0;
    await replay.advanceTo(replay.endsAt, 3);
    expect(replay.view()?.lastSeq).toBe(before + 3);
    expect(replay.clock).toBe((await store.read({ afterSeq: before + 2, limit: 1 }))[0]?.ts);
    expect(replay.finished).toBe(false);
    await replay.advanceTo(replay.endsAt);
    expect(replay.finished).toBe(true);
  });

  it('carries the green branch, and at the end of a run still going reads as colony status does at any later time', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    const landed = 'c'.repeat(40);
    run.append('system', greenChecked(landed, true));
    run.append('system', greenAdvanced(landed));
    run.tick(30_000);
    run.land('worker-b', 'e'.repeat(40), ['src/printer.ts']);
    run.tick(30_000);
    run.append('system', greenChecked('e'.repeat(40), false));
    run.append('system', greenBisected('e'.repeat(40), 'e'.repeat(40), { taskId: 'task-b' }));
    run.tick(20_000);
    run.step('worker-b', 2, 'read_file', { path: 'README.md' }, 'hello');
    const opened = await openReplay(store);
    if (!opened.ok) throw new Error(opened.error);
    const replay = opened.replay;
    await replay.advanceTo(SCRIPT_T0 + 70_000);
    expect(replay.view()?.status.green).toMatchObject({ commit: landed, snapshots: 1, redNow: false });
    await replay.advanceTo(replay.endsAt);
    const status = foldRunStatus({ events: await store.read(), tasks: [], deliveredHandoffs: [], now: run.now + 3_600_000 });
    expect(replay.view()?.status.green).toEqual(status?.green);
    // Red from e's landing (96 s) to the latest event (146 s) of 146 s.
    expect(status?.green).toMatchObject({ commit: landed, snapshots: 2, redSnapshots: 1, redNow: true, since: SCRIPT_T0 + 96_000, redShare: 0.3425 });
  });

  it('makes moves asked for at once one after another, in the order they were asked', async () => {
    const { store, run } = openLog();
    twoWorkers(run);
    const opened = await openReplay(store);
    if (!opened.ok) throw new Error(opened.error);
    const replay = opened.replay;
    const before = replay.view()?.lastSeq ?? 0;
    const stepped = await Promise.all([replay.step(), replay.advanceTo(replay.clock), replay.step()]);
    expect([stepped[0]?.seq, stepped[2]?.seq]).toEqual([before + 1, before + 2]);
    expect(replay.view()?.lastSeq).toBe(before + 2);
  });

  it('says when there is no run to replay', async () => {
    const opened = await openReplay(createMemoryEventStore());
    expect(opened).toEqual({ ok: false, error: 'the log holds no run to replay.' });
  });
});
