import { join } from 'node:path';
import { expect } from 'vitest';
import type { ColonyEvent, EventData } from '../../src/events/event-types.js';
import { openSqliteEventStore } from '../../src/store/sqlite/sqlite-event-store.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/sqlite-task-store.js';
import type { TaskRecord } from '../../src/store/tasks/task-store.js';
import type { ExampleRepository } from './example-repository.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

export interface WoundDownRun {
  readonly events: ColonyEvent[];
  readonly tasks: TaskRecord[];
  readonly exhausted: EventData<'budget.exhausted'>;
}

/** The run's whole event log and task table, read from its own store. */
export async function readRun(repo: ExampleRepository): Promise<{ events: ColonyEvent[]; tasks: TaskRecord[] }> {
  const path = join(defaultStateDir(repo.dir), 'colony.db');
  const events = openSqliteEventStore(path);
  const tasks = openSqliteTaskStore(path, { readOnly: true });
  try {
    const all = await events.read({});
    const runId = all.findLast((event) => event.type === 'run.started')?.runId ?? '';
    return { events: all.filter((event) => event.runId === runId), tasks: await tasks.listTasks(runId) };
  } finally {
    await tasks.close();
    await events.close();
  }
}

/**
 * What every run a limit wound down must show: the run ended `budget-exhausted`, the limit was
 * warned about and used up once each, every task was closed with exactly one handoff (none left
 * open, no planner waiting on silence), and every agent running when the limit was used up, or
 * started after, made at most one model call after it was told.
 */
export async function expectWoundDown(repo: ExampleRepository, measure: 'tokens' | 'usd' | 'time'): Promise<WoundDownRun> {
  const { events, tasks } = await readRun(repo);
  expect(events.findLast((event) => event.type === 'run.ended')).toMatchObject({ data: { status: 'budget-exhausted' } });
  const runScope = (event: ColonyEvent) => 'data' in event && (event.data as { scope?: string }).scope === 'run';
  const warned = events.filter((event) => event.type === 'budget.warned' && runScope(event) && event.data.measure === measure);
  const exhaustedEvents = events.filter((event) => event.type === 'budget.exhausted' && runScope(event) && event.data.measure === measure);
  expect(warned).toHaveLength(1);
  expect(exhaustedEvents).toHaveLength(1);
  const exhaustedEvent = exhaustedEvents[0];
  if (exhaustedEvent?.type !== 'budget.exhausted') throw new Error('no budget.exhausted event');
  expect(events.indexOf(warned[0] as ColonyEvent)).toBeLessThan(events.indexOf(exhaustedEvent));

  // Exactly one handoff per task, the root's included.
  expect(tasks.length).toBeGreaterThan(1);
  for (const task of tasks) expect(task.status === 'open' || task.status === 'running', `task ${task.id} is ${task.status}`).toBe(false);
  const delivered = events.flatMap((event) => (event.type === 'handoff.delivered' ? [event.data.taskId] : []));
  expect([...delivered].sort()).toEqual(tasks.map((task) => task.id).sort());

  // After the limit was used up, each agent was told once and then made at most that one call.
  const after = events.slice(events.indexOf(exhaustedEvent));
  const callsAfter = new Map<string, number>();
  for (const event of after) {
    if (event.type === 'model.requested') callsAfter.set(event.agentId, (callsAfter.get(event.agentId) ?? 0) + 1);
  }
  for (const [agentId, calls] of callsAfter) expect(calls, `${agentId} made ${calls} calls after the limit was used up`).toBeLessThanOrEqual(1);
  const told = after.filter((event) => event.type === 'agent.nudged' && event.data.message.startsWith('Budget used up:'));
  expect(told.length).toBeGreaterThan(0);
  return { events, tasks, exhausted: exhaustedEvent.data };
}

/**
 * The promise: the spend passes the limit by at most one model call per agent running in the
 * wind-down (those running when it was used up and any that started after), each call at most
 * the largest the run made. Checked for the run's own limit.
 */
export function expectSpendWithinOneCallPerAgent(run: WoundDownRun, limit: number, spendOf: (data: EventData<'model.responded'>) => number): void {
  const { events, exhausted } = run;
  const responses = events.flatMap((event) => (event.type === 'model.responded' ? [spendOf(event.data)] : []));
  const total = responses.reduce((sum, spend) => sum + spend, 0);
  const largest = Math.max(...responses);
  const at = events.findIndex((event) => event.type === 'budget.exhausted' && event.data.measure === exhausted.measure && event.data.scope === 'run');
  const running = new Set<string>();
  for (const event of events.slice(0, at)) {
    if (event.type === 'agent.started') running.add(event.agentId);
    if (event.type === 'agent.ended') running.delete(event.agentId);
  }
  for (const event of events.slice(at)) if (event.type === 'agent.started') running.add(event.agentId);
  expect(total).toBeGreaterThan(0.8 * limit);
  expect(total).toBeLessThanOrEqual(limit + largest * running.size);

  // What keeps it in every order of events: from the answer that used the limit up on, an agent
  // has at most two calls land, the one in flight then and its last, and the last only if the
  // one in flight landed within the limit.
  const crossing = events.slice(0, at).findLastIndex((event) => event.type === 'model.responded');
  let spent = 0;
  const landedLate = new Map<string, number[]>();
  events.forEach((event, index) => {
    if (event.type !== 'model.responded') return;
    spent += spendOf(event.data);
    if (index >= crossing) landedLate.set(event.agentId, [...(landedLate.get(event.agentId) ?? []), spent]);
  });
  for (const [agentId, landings] of landedLate) {
    expect(landings.length, `${agentId} had ${landings.length} calls land after the limit was used up`).toBeLessThanOrEqual(2);
    if (landings.length === 2) expect(landings[0], `${agentId} made a last call after its call in flight landed past the limit`).toBeLessThanOrEqual(limit);
  }
}
