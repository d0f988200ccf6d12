import { taskCreatedEvent } from './task-created-event.js';
import type { EventBody } from '../../events/event-types.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';

/**
 * The task table commits a task's creation and a handoff's delivery on its own, and the event
 * log records them just after: a crash between the two leaves the log short of what happened.
 * On resume, the table is the proof: each task it holds that the log never saw created gets its
 * `task.created` (under the agent that published it), each closed task without a
 * `handoff.delivered` gets one. Returns how many events were added.
 */
export async function repairLogFromTasks(events: EventStore, tasks: TaskStore, runId: string): Promise<number> {
  const logged = await events.read({ runId, types: ['task.created', 'handoff.delivered'] });
  const created = new Set<string>();
  const delivered = new Set<string>();
  for (const event of logged) {
    if (event.type === 'task.created') created.add(event.data.taskId);
    if (event.type === 'handoff.delivered') delivered.add(event.data.taskId);
  }
  let repaired = 0;
  const record = (agentId: string, body: EventBody): void => {
    events.append({ ...body, runId, agentId });
    repaired += 1;
  };
  for (const task of await tasks.listTasks(runId)) {
    if (!created.has(task.id)) {
      record(task.createdBy ?? 'system', taskCreatedEvent(task));
    }
    if (task.handoff !== null && task.status !== 'open' && task.status !== 'running' && !delivered.has(task.id)) {
      record('system', { type: 'handoff.delivered', data: { taskId: task.id, parentTaskId: task.parentTaskId, status: task.handoff.status } });
    }
  }
  if (repaired > 0) await events.flush();
  return repaired;
}
