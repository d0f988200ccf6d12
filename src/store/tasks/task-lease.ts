import type { Lease, TaskStatus } from './task-store.js';

/** What the fence looks at in a stored task. */
export interface LeasedTask {
  readonly status: TaskStatus;
  readonly attempt: number;
  readonly leaseHolder: string | null;
}

/** True when `lease` is the attempt running `task` now. */
export function isCurrentLease(task: LeasedTask, lease: Lease): boolean {
  return task.status === 'running' && task.leaseHolder === lease.holder && task.attempt === lease.attempt;
}

/**
 * Why a write carrying `lease` is refused, or null when the lease is current. `subject` names
 * the task the lease is for ("Task t-1", "The planner of task t-1"), `write` what was refused
 * ("this handoff"). The reason names both attempts, so whoever reads it (a person, a log
 * reader, the stale agent itself) sees that a newer attempt owns the task.
 */
export function staleLeaseReason(task: LeasedTask, lease: Lease, subject: string, write: string): string | null {
  if (isCurrentLease(task, lease)) return null;
  const from = `attempt ${lease.attempt} (held by ${lease.holder})`;
  if (task.status === 'running') {
    return (
      `${subject} is run by attempt ${task.attempt} (held by ${task.leaseHolder ?? 'nobody'}); ` +
      `${write} came from ${from} and was ignored.`
    );
  }
  if (task.status === 'open') {
    return `${subject} is open, waiting to be claimed again, so no attempt runs it; ${write} came from ${from} and was ignored.`;
  }
  return `${subject} is already closed (${task.status}); ${write} came from ${from} and was ignored.`;
}
