import type { ColonyEvent } from '../../events/event-types.js';
import { handoffStatusSchema, type Handoff } from '../../events/handoff.js';
import type { TaskStatus } from '../../store/tasks/task-store.js';

/** One task as the log tells it: published, claimed, handed back, closed. */
export interface TaskEntry {
  readonly id: string;
  readonly parentTaskId: string | null;
  readonly kind: 'worker' | 'planner';
  readonly title: string;
  readonly status: TaskStatus;
  readonly createdAt: number;
  /** The agent that last took it; null before one did. */
  readonly agentId: string | null;
  /** How many times it was claimed (more than one after a restart or a lost lease). */
  readonly claims: number;
  /** The task this one publishes again, when its planner retried one. */
  readonly retryOf: string | null;
  /** When its handoff was delivered and it closed; null while it is open or running. */
  readonly closedAt: number | null;
}

/** A handoff as submitted, with who sent it and when. */
export interface HandoffEntry {
  readonly seq: number;
  readonly ts: number;
  readonly taskId: string;
  readonly agentId: string;
  readonly handoff: Handoff;
}

/** Tasks by status and the handoffs with their notes, folded from the log alone. */
export interface TaskBoard {
  /** Every task of the run, the root planner's included, in the order they were published. */
  readonly tasks: readonly TaskEntry[];
  /** Tasks of the tree, the root planner's own excepted (as `colony status` counts them). */
  readonly counts: { readonly total: number; readonly byStatus: Readonly<Record<TaskStatus, number>> };
  /** Handoffs delivered to a parent's inbox. */
  readonly delivered: number;
  /** The latest handoffs, oldest first. */
  readonly handoffs: readonly HandoffEntry[];
}

export interface TaskBoardFold {
  add(event: ColonyEvent): void;
  snapshot(): TaskBoard;
}

/** The events the board changes on. */
const BOARD_EVENTS: ReadonlySet<ColonyEvent['type']> = new Set(['task.created', 'task.claimed', 'agent.started', 'task.released', 'handoff.delivered', 'handoff.submitted']);

type TaskRecord = { -readonly [K in keyof TaskEntry]: TaskEntry[K] };

export function createTaskBoardFold(keepHandoffs = 200): TaskBoardFold {
  const tasks = new Map<string, TaskRecord>();
  const handoffs: HandoffEntry[] = [];
  let delivered = 0;
  // A view asks for a snapshot every frame; the board is copied again only after it changed.
  let latest: TaskBoard | null = null;
  return {
    add(event) {
      if (BOARD_EVENTS.has(event.type)) latest = null;
      switch (event.type) {
        case 'task.created':
          if (!tasks.has(event.data.taskId)) {
            tasks.set(event.data.taskId, {
              id: event.data.taskId,
              parentTaskId: event.data.parentTaskId,
              kind: event.data.kind,
              title: event.data.title,
              status: 'open',
              createdAt: event.ts,
              agentId: null,
              claims: 0,
              retryOf: event.data.retryOf,
              closedAt: null,
            });
          }
          return;
        case 'task.claimed': {
          const task = tasks.get(event.data.taskId);
          if (task === undefined) return;
          task.status = 'running';
          task.claims += 1;
          return;
        }
        case 'agent.started': {
          const task = tasks.get(event.data.taskId);
          if (task !== undefined) task.agentId = event.agentId;
          return;
        }
        case 'task.released': {
          const task = tasks.get(event.data.taskId);
          if (task === undefined) return;
          task.status = 'open';
          task.closedAt = null;
          return;
        }
        case 'handoff.delivered': {
          const task = tasks.get(event.data.taskId);
          const status = handoffStatusSchema.safeParse(event.data.status);
          if (task !== undefined) {
            task.status = status.success ? status.data : 'failed';
            task.closedAt = event.ts;
          }
          if (event.data.parentTaskId !== null) delivered += 1;
          return;
        }
        case 'handoff.submitted':
          handoffs.push({ seq: event.seq, ts: event.ts, taskId: event.data.taskId, agentId: event.agentId, handoff: event.data.handoff });
          if (handoffs.length > keepHandoffs) handoffs.shift();
          return;
        default:
          // Only the events of a task's life and its handoff change the board.
          return;
      }
    },
    snapshot() {
      if (latest !== null) return latest;
      const byStatus: Record<TaskStatus, number> = { open: 0, running: 0, done: 0, partial: 0, blocked: 0, failed: 0 };
      let total = 0;
      for (const task of tasks.values()) {
        if (task.parentTaskId === null) continue;
        byStatus[task.status] += 1;
        total += 1;
      }
      latest = { tasks: [...tasks.values()].map((task) => ({ ...task })), counts: { total, byStatus }, delivered, handoffs: [...handoffs] };
      return latest;
    },
  };
}
