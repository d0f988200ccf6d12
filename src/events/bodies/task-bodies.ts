import { z } from 'zod';
import { taskKindSchema, budgetFiguresSchema } from '../event-fields.js';
import { handoffSchema } from '../handoff.js';

/** The events of tasks, handoffs, messages, steering, the green loop and budgets: the last part of the event union. */
export const taskBodies = [
  z.object({
    type: z.literal('handoff.submitted'),
    data: z.object({ taskId: z.string(), handoff: handoffSchema }),
  }),
  z.object({
    type: z.literal('task.created'),
    data: z.object({
      taskId: z.string(),
      parentTaskId: z.string().nullable(),
      kind: taskKindSchema,
      title: z.string(),
      scope: z.string().nullable(),
      retryOf: z.string().nullable(),
      /** The files or folders (a folder ends in `/`) the planner declared the task would change. */
      paths: z.array(z.string()).optional(),
      /** The commands that must pass on main once the task's work landed; absent when none. */
      acceptance: z.array(z.string()).optional(),
    }),
  }),
  z.object({
    type: z.literal('task.claimed'),
    data: z.object({ taskId: z.string(), kind: taskKindSchema, attempt: z.number().int(), holder: z.string() }),
  }),
  z.object({
    type: z.literal('task.released'),
    data: z.object({ taskId: z.string(), reason: z.string() }),
  }),
  z.object({
    /** A task closed with its handoff, delivered to its parent's inbox in the same transaction. */
    type: z.literal('handoff.delivered'),
    data: z.object({ taskId: z.string(), parentTaskId: z.string().nullable(), status: z.string() }),
  }),
  z.object({
    /** A message (a handoff, or a person's message) taken from the inbox into a planner's conversation. */
    type: z.literal('message.received'),
    data: z.object({
      step: z.number().int(),
      fromTaskId: z.string().nullable(),
      content: z.string(),
      /**
       * The inbox message's `seq` in the task store, so a resumed run can tell which taken
       * messages reached the conversation; absent in logs written before it was recorded.
       */
      inboxSeq: z.number().int().optional(),
    }),
  }),
  z.object({
    /** A planner with nothing to do until a message arrives; it makes no model calls meanwhile. */
    type: z.literal('agent.waiting'),
    data: z.object({ step: z.number().int(), openChildren: z.number().int() }),
  }),
  z.object({
    type: z.literal('scratchpad.written'),
    /** The whole scratchpad: each write replaces the one before. */
    data: z.object({ content: z.string() }),
  }),
  z.object({
    /**
     * A planner pulled or released its andon (`taskId`: nothing below that task is claimed while
     * it is paused), or the user pulled or released the run's andon with `colony andon` (`by:
     * 'user'`, `taskId` null: no task of the run is claimed while it is paused; `andonSeq` is the
     * change's place in the task store). Without `by`, a planner's.
     */
    type: z.literal('andon.changed'),
    data: z.object({
      taskId: z.string().nullable(),
      paused: z.boolean(),
      reason: z.string(),
      by: z.enum(['planner', 'user']).optional(),
      andonSeq: z.number().int().optional(),
    }),
  }),
  z.object({
    /**
     * The run's goal file changed while the run went (or while it was down): `added` and
     * `removed` lines against the goal the root planner was told last, which was sent the change
     * and the whole new goal (see the `message.sent` that follows). `goal` is the new goal as
     * told, so a resumed run compares with it. With `error` the file could not be read (gone,
     * unreadable, empty): nothing was sent, and the planner keeps the goal it has.
     */
    type: z.literal('goal.changed'),
    data: z.object({
      path: z.string(),
      added: z.number().int().nonnegative(),
      removed: z.number().int().nonnegative(),
      goal: z.string().optional(),
      error: z.string().optional(),
    }),
  }),
  z.object({
    /**
     * A message was left in a planner's inbox for it: a person's (`colony say`), or the word of
     * a goal edit. `inboxSeq` is its place in the task store; the planner's `message.received`
     * follows when it takes it in.
     */
    type: z.literal('message.sent'),
    data: z.object({ recipientTaskId: z.string(), text: z.string(), inboxSeq: z.number().int() }),
  }),
  z.object({
    /** colony ran the project's check command on a commit of main (at the end of a run). */
    type: z.literal('main.checked'),
    data: z.object({
      command: z.string(),
      commit: z.string(),
      passed: z.boolean(),
      exitCode: z.number().int().nullable(),
      timedOut: z.boolean(),
      durationMs: z.number(),
      outputTail: z.string(),
    }),
  }),
  z.object({
    /**
     * A green snapshot: colony ran the project's check command on main's commit in a view of its
     * own (after enough landings or time, at the release, or when asked with `colony green --now`).
     */
    type: z.literal('green.checked'),
    data: z.object({
      commit: z.string(),
      command: z.string(),
      passed: z.boolean(),
      exitCode: z.number().int().nullable(),
      timedOut: z.boolean(),
      durationMs: z.number(),
      /** Milliseconds of CPU the check used, counted by its cgroup; absent where nothing counted it. */
      cpuMs: z.number().optional(),
      outputTail: z.string(),
      /** The output's failure lines (failing tests, errors), normalised: what tells one failure from another. */
      failures: z.array(z.string()),
      trigger: z.enum(['landings', 'interval', 'release', 'request']),
      /** Commits main gained since the previous snapshot (since the run started, for the first). */
      landed: z.number().int().nonnegative(),
    }),
  }),
  z.object({
    /** A person asked for a green snapshot now (`colony green --now`); the snapshot follows as `green.checked` with trigger `request`. */
    type: z.literal('green.requested'),
    data: z.object({ reason: z.string(), requestSeq: z.number().int() }),
  }),
  z.object({
    /** The green branch moved forward, fast-forward only, to a commit whose check passed. */
    type: z.literal('green.advanced'),
    data: z.object({ branch: z.string(), from: z.string().nullable(), to: z.string(), tag: z.string().nullable() }),
  }),
  z.object({
    /**
     * The green loop could not do part of its work, and says why: the branch could not move forward
     * (it is not an ancestor of the passing commit, so it was left as it was), a tag could not be
     * made, or a check could not run (git could not check the commit out).
     */
    type: z.literal('green.blocked'),
    data: z.object({ branch: z.string(), commit: z.string(), reason: z.string() }),
  }),
  z.object({
    /**
     * A red snapshot's new failure was bisected between the last passing commit and the snapshot
     * to the commit that brought it. `firstBad` is null when main already failed so at the run's start.
     */
    type: z.literal('green.bisected'),
    data: z.object({
      snapshot: z.string(),
      good: z.string().nullable(),
      firstBad: z.string().nullable(),
      subject: z.string(),
      /** The task whose merge landed `firstBad`, the agent that merged it, and the planner that owns the task. */
      taskId: z.string().nullable(),
      agentId: z.string().nullable(),
      plannerTaskId: z.string().nullable(),
      failures: z.array(z.string()),
      /** Commits the check ran on to find it. */
      checks: z.number().int().nonnegative(),
      durationMs: z.number(),
      /** True when the failure was already reported (the same first bad commit): no second message goes out. */
      known: z.boolean(),
    }),
  }),
  z.object({
    /** A fix-up message about a distinct failure went to the inbox of the planner that owns its task (or the nearest one still at work). */
    type: z.literal('green.reported'),
    data: z.object({
      firstBad: z.string().nullable(),
      taskId: z.string().nullable(),
      plannerTaskId: z.string().nullable(),
      /** The planner told; null when no planner of the run was still at work to tell. */
      recipientTaskId: z.string().nullable(),
      command: z.string(),
      failures: z.array(z.string()),
      /** True when the root planner was told in its refused finish at the release, not by a message. */
      inRefusal: z.boolean().optional(),
    }),
  }),
  z.object({
    /** The run's limits, as the user set them (`--budget-tokens`, `--budget-usd`, `--max-hours`); null for none. */
    type: z.literal('budget.set'),
    data: z.object({
      tokens: z.number().int().positive().nullable(),
      usd: z.number().positive().nullable(),
      maxHours: z.number().positive().nullable(),
      /** When the clock runs out, in milliseconds since the epoch; null without `--max-hours`. */
      deadline: z.number().nullable(),
    }),
  }),
  z.object({
    /** A delegated subtree's share of its parent's budget, fixed when it was delegated; null where the run has no such limit. */
    type: z.literal('budget.allotted'),
    data: z.object({ taskId: z.string(), parentTaskId: z.string(), tokens: z.number().nullable(), usd: z.number().nullable() }),
  }),
  z.object({
    /** A scope (the run, or a delegated subtree) spent 80% of one of its limits. Once per scope and limit. */
    type: z.literal('budget.warned'),
    data: budgetFiguresSchema,
  }),
  z.object({
    /**
     * A scope's limit is used up: what is left no longer covers one more model call for each of
     * its running agents. Its agents each get one last call to hand off; nothing new starts in it.
     */
    type: z.literal('budget.exhausted'),
    data: budgetFiguresSchema.extend({
      /** What was held back for the final calls: the largest call seen so far, for each running agent. */
      reserved: z.number(),
      /** Agents running in the scope at that moment. */
      agents: z.number().int(),
    }),
  }),
  z.object({
    /** A planner declared its scope complete; for a sub-planner this summary is its handoff. */
    type: z.literal('planner.finished'),
    data: z.object({ taskId: z.string(), status: z.string(), summary: z.string() }),
  }),
  z.object({
    /**
     * The user changed how many workers may run at once (`colony workers`): the runner claims up
     * to `workers` from now on (workers already running go on), and a resumed run keeps it.
     * `previous` is the limit before; `requestSeq` the request's seq in the task store.
     */
    type: z.literal('workers.changed'),
    data: z.object({
      workers: z.number().int().positive(),
      previous: z.number().int().positive(),
      by: z.literal('user'),
      requestSeq: z.number().int(),
    }),
  }),
  z.object({
    /**
     * The user asked colony to stop the agent on a task (`colony stop`): the agent stops at its
     * next safe point and the task closes with a failed handoff to its planner ("stopped by the
     * user"). `stoppedAgentId` is the agent whose work that ends (the latest started on the
     * task); null when none had started on it. Recorded while the run was down, the task is
     * closed when the resumed run claims it, its agent not taken up again.
     */
    type: z.literal('agent.stop-requested'),
    data: z.object({
      taskId: z.string(),
      stoppedAgentId: z.string().nullable(),
      reason: z.string(),
      requestSeq: z.number().int(),
    }),
  }),
] as const;
