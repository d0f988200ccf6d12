import type { EventBody } from '../../events/event-types.js';
import { syntheticFailureHandoff } from '../../events/handoff.js';
import type { TaskRecord } from '../../store/tasks/task-store.js';
import type { RunContext } from '../context/run-context.js';
import type { TaskExecution } from '../context/task-execution.js';
import { landedCommits, priorOf, recordedHandoff, type PriorAgentsOfRun } from '../resume/prior-agents.js';
import type { UserStop } from '../steering/user-stop.js';

/**
 * What a task the user stopped before this runner started its agent hands off (it was asked
 * while the run was down, or while its task waited to be taken up again): what its agent's
 * last life recorded, when it had ended, else what that life landed.
 */
export async function stoppedBeforeStart(context: PriorAgentsOfRun, task: TaskRecord): Promise<TaskExecution> {
  const prior = await priorOf(context, task);
  const recorded = prior === null ? null : recordedHandoff(prior);
  if (prior !== null && recorded !== null) return { agentId: prior.agentId, handoff: recorded };
  return {
    agentId: prior?.agentId ?? 'system',
    handoff: syntheticFailureHandoff({
      summary: prior === null ? 'No agent had started on it.' : `Its agent ${prior.agentId} was not taken up again after the run stopped.`,
      commits: prior === null ? [] : landedCommits(prior),
    }),
  };
}

/**
 * A stopped task's handoff: it says first that the user stopped it and why, and keeps what the
 * agent's own ending said about its work. A planner's also lists the tasks it published and how
 * each stands: those still open or running go on to their end like any task (as below any
 * planner that ends early), but their handoffs reach no planner, so its own planner is told
 * which they are before it plans the scope again.
 */
export function userStoppedHandoff(execution: TaskExecution, stop: UserStop, task: TaskRecord, children: readonly TaskRecord[]): TaskExecution {
  const role = task.kind === 'worker' ? 'worker' : 'sub-planner';
  const unfinished = children.filter((child) => child.status === 'open' || child.status === 'running');
  const concerns =
    task.kind === 'worker'
      ? ['Check main for any part of the task that landed before it was stopped, then publish what is still needed again, changed as the reason says.']
      : [
          'Check main for what its tasks landed before planning its scope again, changed as the reason says.',
          ...(unfinished.length === 0
            ? []
            : [
                `${unfinished.length} task(s) it published are still open or running (${unfinished.map((child) => child.id).join(', ')}): they go on to their end, but their handoffs reach no planner. Do not publish them again; the user can stop them too with colony stop.`,
              ]),
        ];
  return {
    agentId: execution.agentId,
    handoff: syntheticFailureHandoff({
      summary: `The ${role} was stopped by the user: ${stop.reason}`,
      commits: execution.handoff.commits,
      notes: [
        execution.handoff.summary,
        ...execution.handoff.notes,
        ...children.map((child) => `It published task ${child.id} (${child.title}): ${child.handoff === null ? child.status : `${child.handoff.status}: ${child.handoff.summary}`}`),
      ],
      concerns,
    }),
  };
}

/**
 * Lifts the andon of a planner the user stopped, when it had pulled it: only that planner
 * could release it, so the tasks it holds back would stay open for good. Released, they run
 * to their end like the rest of what it published. Returns whether there was one to lift.
 */
export async function releaseStoppedPlannersAndon(context: Pick<RunContext, 'tasks' | 'runId' | 'now'>, task: TaskRecord, record: (body: EventBody) => void): Promise<boolean> {
  if (task.kind !== 'planner' || !(await context.tasks.pausedTasks(context.runId)).includes(task.id)) return false;
  await context.tasks.setAndon(task.id, false, context.now());
  record({ type: 'andon.changed', data: { taskId: task.id, paused: false, reason: 'its planner was stopped by the user, so nothing else would release it', by: 'user' } });
  return true;
}
