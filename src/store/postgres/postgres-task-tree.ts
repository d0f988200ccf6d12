import { isCurrentLease, staleLeaseReason } from '../tasks/task-lease.js';
import { acceptanceToJson, checkTime, pathsToJson, taskFromRow } from '../tasks/task-rows.js';
import type { CreateTaskResult, Lease, NewTask, TaskRecord } from '../tasks/task-store.js';
import { isUniqueViolation } from './postgres-failures.js';
import { TASK_COLUMNS, lockRunTree, notifyTaskChange, returnedRow, taskRowById } from './postgres-task-rows.js';
import type { TaskRow, TaskStoreContext } from './postgres-task-rows.js';

const INSERT_TASK =
  'INSERT INTO tasks (id, run_id, parent_task_id, created_by, kind, title, body, scope, retry_of, paths, acceptance, ' +
  "status, attempt, created_at, paused_ancestors) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'open', 0, $12, $13) " +
  `RETURNING ${TASK_COLUMNS}`;

/** Every task below `$1`, at any depth, moved by `$2` paused ancestors. */
const MOVE_PAUSED_ANCESTORS =
  'WITH RECURSIVE below (id) AS (SELECT id FROM tasks WHERE parent_task_id = $1 ' +
  'UNION ALL SELECT child.id FROM tasks AS child JOIN below ON child.parent_task_id = below.id) ' +
  'UPDATE tasks SET paused_ancestors = paused_ancestors + $2 WHERE id IN (SELECT id FROM below)';

function taskTaken(context: TaskStoreContext, id: string): Error {
  return new Error(`A task with id ${id} already exists in ${context.where}; every task needs a new id.`);
}

/**
 * Publishes a task, under its run's tree lock so no andon walk overlaps it; with a publisher,
 * the parent's row is held (FOR SHARE) from the lease check to the commit, so no claim makes
 * the publisher stale in between.
 */
export async function createTask(context: TaskStoreContext, task: NewTask, now: number, publisher: Lease | undefined): Promise<CreateTaskResult> {
  checkTime('createTask now', now);
  const pathsJson = pathsToJson(task.id, task.paths);
  const acceptanceJson = acceptanceToJson(task.id, task.acceptance);
  if (publisher !== undefined && task.parentTaskId === null) {
    throw new TypeError(`Task ${task.id} is a root task: nobody publishes it, so it takes no publisher lease.`);
  }
  try {
    return await context.connection.transaction(async (client): Promise<CreateTaskResult> => {
      await lockRunTree(context, client, task.runId);
      if ((await taskRowById(client, task.id)) !== undefined) throw taskTaken(context, task.id);
      let pausedAncestors = 0;
      if (task.parentTaskId !== null) {
        const parent = await taskRowById(client, task.parentTaskId, publisher === undefined ? '' : 'FOR SHARE');
        if (parent === undefined || parent.runId !== task.runId) {
          throw new Error(`Task ${task.id} names parent ${task.parentTaskId}, which is not a task of run ${task.runId}.`);
        }
        if (publisher !== undefined) {
          const stale = staleLeaseReason(parent, publisher, `The planner of task ${parent.id}`, `this publish of task ${task.id}`);
          if (stale !== null) return { ok: false, error: stale };
        }
        pausedAncestors = parent.pausedAncestors + (parent.paused ? 1 : 0);
      }
      const { rows } = await client.query<TaskRow>(INSERT_TASK, [
        task.id,
        task.runId,
        task.parentTaskId,
        task.createdBy,
        task.kind,
        task.title,
        task.body,
        task.scope,
        task.retryOf,
        pathsJson,
        acceptanceJson,
        now,
        pausedAncestors,
      ]);
      await notifyTaskChange(context, client, { runId: task.runId, change: 'created' });
      return { ok: true, task: taskFromRow(returnedRow(rows, `the new task ${task.id}`), context.where) };
    });
  } catch (error) {
    // The same id published at the same moment in another run, which holds another tree lock.
    if (isUniqueViolation(error)) throw taskTaken(context, task.id);
    throw error;
  }
}

export async function getTask(context: TaskStoreContext, id: string): Promise<TaskRecord | null> {
  const row = await context.connection.read((client) => taskRowById(client, id));
  return row === undefined ? null : taskFromRow(row, context.where);
}

/** The tasks whose `column` is `value`, oldest first. */
export async function tasksWhere(context: TaskStoreContext, column: 'run_id' | 'parent_task_id', value: string): Promise<TaskRecord[]> {
  const rows = await context.connection.read(async (client) => {
    const result = await client.query<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE ${column} = $1 ORDER BY seq`, [value]);
    return result.rows;
  });
  return rows.map((row) => taskFromRow(row, context.where));
}

/** How many children of the task are open or running; with `movable`, only those that can still hand off unaided. */
export async function countChildren(context: TaskStoreContext, parentTaskId: string, movable: boolean): Promise<number> {
  const which = movable ? "(status = 'running' OR (status = 'open' AND paused_ancestors = 0))" : "status IN ('open', 'running')";
  return context.connection.read(async (client) => {
    const { rows } = await client.query<{ count: number }>(`SELECT COUNT(*) AS count FROM tasks WHERE parent_task_id = $1 AND ${which}`, [parentTaskId]);
    return rows[0]?.count ?? 0;
  });
}

/**
 * Switches a task's andon and moves the paused-ancestor count of every task below it, in one
 * transaction under the run's tree lock, the task's row held from the lease check on.
 */
export async function setAndon(context: TaskStoreContext, taskId: string, paused: boolean, now: number, lease: Lease | undefined): Promise<boolean> {
  checkTime('setAndon now', now);
  return context.connection.transaction(async (client) => {
    const unknown = new Error(`There is no task ${taskId} to set the andon of.`);
    const found = await taskRowById(client, taskId);
    if (found === undefined) throw unknown;
    // A task's run never changes: the lock its first read names is the one its andon needs.
    await lockRunTree(context, client, found.runId);
    const task = await taskRowById(client, taskId, 'FOR UPDATE');
    if (task === undefined) throw unknown;
    if (lease !== undefined && !isCurrentLease(task, lease)) return false;
    // Pausing a paused task changes nothing: the andon is a switch, not a counter.
    if (task.paused === paused) return true;
    await client.query('UPDATE tasks SET paused = $1, andon_changed_at = $2 WHERE seq = $3', [paused, now, task.seq]);
    await client.query(MOVE_PAUSED_ANCESTORS, [taskId, paused ? 1 : -1]);
    await notifyTaskChange(context, client, { runId: task.runId, change: 'andon' });
    return true;
  });
}

export async function pausedTasks(context: TaskStoreContext, runId: string): Promise<string[]> {
  return context.connection.read(async (client) => {
    const { rows } = await client.query<{ id: string }>('SELECT id FROM tasks WHERE run_id = $1 AND paused ORDER BY seq', [runId]);
    return rows.map((row) => row.id);
  });
}
