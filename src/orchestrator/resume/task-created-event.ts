import type { EventBody } from '../../events/event-types.js';
import type { TaskRecord } from '../../store/tasks/task-store.js';

/** The `task.created` event of a stored task: what a planner's publish records, and what a log repair records for it. */
export function taskCreatedEvent(task: TaskRecord): EventBody {
  const { id: taskId, parentTaskId, kind, title, scope, retryOf, paths, acceptance } = task;
  return {
    type: 'task.created',
    data: {
      taskId,
      parentTaskId,
      kind,
      title,
      scope,
      retryOf,
      ...(kind === 'worker' ? { paths: [...paths] } : {}),
      ...(acceptance.length === 0 ? {} : { acceptance: [...acceptance] }),
    },
  };
}
