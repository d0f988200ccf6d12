import { z } from 'zod';
import { runSettingsSchema } from './run-settings.js';
import { handoffSchema, handoffStatusSchema } from './handoff.js';

/**
 * Every event colony records, as one discriminated union on `type`. Names are
 * noun.past-tense-verb. A payload only ever gains optional fields within a version; a change
 * that breaks readers bumps EVENT_VERSION.
 */
export const EVENT_VERSION = 1;

const usageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative(),
});

const toolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The arguments exactly as the model sent them: possibly not JSON at all. */
  input: z.string(),
});

/** The three roles of the tree. */
export const agentRoleSchema = z.enum(['root-planner', 'sub-planner', 'worker']);
export type AgentRole = z.infer<typeof agentRoleSchema>;

const taskKindSchema = z.enum(['worker', 'planner']);

const workspaceMethodSchema = z.enum(['worktree', 'overlay']);

/** Which limit: tokens in and out, US dollars, or the wall clock (milliseconds). */
export const budgetMeasureSchema = z.enum(['tokens', 'usd', 'time']);
export type BudgetMeasure = z.infer<typeof budgetMeasureSchema>;

/** One scope's figures for one limit: the run (the root planner's task) or a delegated subtree. */
const budgetFiguresSchema = z.object({
  /** The planner task that owns the scope; the root planner's task for the run. */
  taskId: z.string(),
  scope: z.enum(['run', 'subtree']),
  measure: budgetMeasureSchema,
  spent: z.number(),
  limit: z.number(),
});

const bodies = [
  z.object({
    type: z.literal('run.started'),
    data: z.object({ mode: z.string(), repo: z.string(), model: z.string(), title: z.string() }),
  }),
  z.object({
    type: z.literal('run.ended'),
    data: z.object({ status: z.string(), durationMs: z.number() }),
  }),
  z.object({
    /** What the run was told, so `colony resume` goes on with the same settings. Recorded once, after `run.started`. */
    type: z.literal('run.configured'),
    data: z.object({ settings: runSettingsSchema }),
  }),
  z.object({
    /**
     * Which of colony's prompts the repository replaced (`.colony/prompts/<name>.md`), each with
     * its file and the sha256 of its bytes; empty when none. Recorded when a run starts and
     * each time it resumes, since the files may change in between.
     */
    type: z.literal('prompts.loaded'),
    data: z.object({ overridden: z.array(z.object({ name: z.string(), path: z.string(), sha256: z.string() })) }),
  }),
  z.object({
    /**
     * `colony resume` took the run up again after it stopped or crashed: `resumes` counts the
     * times; `lastSeq` is the last event of the run before it; `released` the tasks whose
     * runner had died, open again for this one; `repaired` events the log lacked and the
     * task table proved (a task created or a handoff delivered just before the crash).
     */
    type: z.literal('run.resumed'),
    data: z.object({
      resumes: z.number().int().positive(),
      lastSeq: z.number().int(),
      released: z.array(z.string()),
      repaired: z.number().int(),
      /** git lock files a killed git process left in the repository, cleared so merges can go on. */
      clearedLocks: z.array(z.string()),
    }),
  }),
  z.object({
    /** colony cannot write its state (the disk is full): no new agent starts until it can; nothing recorded is lost. */
    type: z.literal('disk.full'),
    data: z.object({ path: z.string(), freeBytes: z.number().nullable(), message: z.string() }),
  }),
  z.object({
    /** colony can write its state again after `disk.full`; new agents start again. */
    type: z.literal('disk.recovered'),
    data: z.object({ path: z.string(), pausedMs: z.number() }),
  }),
  z.object({
    /** A worker recorded nothing for `silentMs` (past the run's hang limit): colony stopped it and closed its task with a failure handoff. */
    type: z.literal('agent.hung'),
    data: z.object({ taskId: z.string(), hungAgentId: z.string(), silentMs: z.number(), limitMs: z.number() }),
  }),
  z.object({
    type: z.literal('agent.started'),
    data: z.object({
      role: agentRoleSchema,
      taskId: z.string(),
      title: z.string(),
      model: z.string(),
      systemPrompt: z.string(),
      task: z.string(),
      tools: z.array(z.string()),
      /** The agent that published this agent's task; absent for the root planner and `colony work`. */
      parentAgentId: z.string().nullable().optional(),
      /** Which claim of the task this agent is, from 1. */
      attempt: z.number().int().positive().optional(),
    }),
  }),
  z.object({
    type: z.literal('agent.ended'),
    data: z.object({ status: z.string(), steps: z.number().int(), reason: z.string() }),
  }),
  z.object({
    type: z.literal('agent.failed'),
    data: z.object({ steps: z.number().int(), reason: z.string(), lastToolCall: z.string().nullable() }),
  }),
  z.object({
    type: z.literal('agent.nudged'),
    data: z.object({
      step: z.number().int(),
      message: z.string(),
      /** Set when colony sent it on a schedule: rewrite the scratchpad, or reflect. */
      reminder: z.enum(['scratchpad', 'reflect']).optional(),
    }),
  }),
  z.object({
    /**
     * colony shrank the agent's older tool outputs to make room (see `shrinkOldToolOutputs`):
     * every tool result before the last `keptTurns` answers cut to `maxChars`. The rebuild
     * applies the same cut.
     */
    type: z.literal('context.shrunk'),
    data: z.object({
      step: z.number().int(),
      keptTurns: z.number().int().nonnegative(),
      maxChars: z.number().int().positive(),
      outputs: z.number().int().nonnegative(),
      beforeTokens: z.number().int().nonnegative(),
      afterTokens: z.number().int().nonnegative(),
    }),
  }),
  z.object({
    /**
     * The agent's conversation neared its context window and was summarised: everything after
     * the task up to the last `kept` messages was replaced by one user message holding
     * `summary`. The summary's own model call is accounted here (`usage`, `costUsd`).
     */
    type: z.literal('context.compacted'),
    data: z.object({
      step: z.number().int(),
      model: z.string(),
      windowTokens: z.number().int().positive(),
      beforeTokens: z.number().int().nonnegative(),
      afterTokens: z.number().int().nonnegative(),
      replaced: z.number().int().nonnegative(),
      kept: z.number().int().nonnegative(),
      /** The user message that replaced them, exactly as the agent reads it. */
      summary: z.string(),
      usage: usageSchema,
      costUsd: z.number().nullable(),
      durationMs: z.number(),
    }),
  }),
  z.object({
    /** Compaction could not be done (the summary call failed, or nothing could be cut); the agent goes on or stops as `reason` says. */
    type: z.literal('context.compaction-failed'),
    data: z.object({ step: z.number().int(), reason: z.string(), tokens: z.number().int().nonnegative(), windowTokens: z.number().int().positive() }),
  }),
  z.object({
    type: z.literal('model.requested'),
    data: z.object({ step: z.number().int(), model: z.string(), messages: z.number().int(), chars: z.number().int() }),
  }),
  z.object({
    type: z.literal('model.responded'),
    data: z.object({
      step: z.number().int(),
      text: z.string(),
      toolCalls: z.array(toolCallSchema),
      finishReason: z.string(),
      usage: usageSchema,
      costUsd: z.number().nullable(),
      durationMs: z.number(),
      attempts: z.number().int(),
    }),
  }),
  z.object({
    type: z.literal('model.retried'),
    data: z.object({
      step: z.number().int(),
      attempt: z.number().int(),
      kind: z.string(),
      message: z.string(),
      status: z.number().int().nullable(),
      delayMs: z.number(),
    }),
  }),
  z.object({
    type: z.literal('model.failed'),
    data: z.object({ step: z.number().int(), kind: z.string(), message: z.string(), attempts: z.number().int() }),
  }),
  z.object({
    /**
     * The agent's model call still failed after its retries because the provider is
     * unavailable (rate limited, overloaded, failing, unreachable, or its circuit open): the
     * agent waits `waitMs` and makes the same call again, its conversation and steps intact.
     */
    type: z.literal('agent.parked'),
    data: z.object({ step: z.number().int(), kind: z.string(), message: z.string(), attempts: z.number().int(), waitMs: z.number() }),
  }),
  z.object({
    /** A parked agent's wait is over; it calls the model again for the same step. */
    type: z.literal('agent.resumed'),
    data: z.object({ step: z.number().int(), parkedMs: z.number() }),
  }),
  z.object({
    /**
     * The agent was rebuilt from its recorded conversation after colony stopped, and goes on as
     * incarnation `generation` after model call `step`. Of that call's tool calls, `interrupted`
     * were running when colony stopped: they are answered (a `tool.ended` each) without running
     * them again. `notStarted` never started: they run now, as the rest of that turn.
     */
    type: z.literal('agent.restored'),
    data: z.object({
      generation: z.number().int().positive(),
      step: z.number().int().nonnegative(),
      interrupted: z.number().int().nonnegative(),
      notStarted: z.number().int().nonnegative(),
    }),
  }),
  z.object({
    /**
     * A provider's concurrency gate moved its limit of calls at once: halved on a rate limit or
     * overload (with `holdMs`, how long the provider's retry-after holds every call back), or
     * raised by one after a window of successes. Recorded by the agent whose call caused it.
     */
    type: z.literal('provider.limited'),
    data: z.object({
      provider: z.string(),
      from: z.number().int(),
      to: z.number().int(),
      reason: z.string(),
      holdMs: z.number().nullable(),
    }),
  }),
  z.object({
    /** Too many failures of a provider in a row: calls to it fail fast until one trial call, `retryInMs` from now. */
    type: z.literal('provider.circuit-opened'),
    data: z.object({ provider: z.string(), failures: z.number().int(), reason: z.string(), retryInMs: z.number() }),
  }),
  z.object({
    /** A trial call to a provider whose circuit was open succeeded: calls go to it again. */
    type: z.literal('provider.circuit-closed'),
    data: z.object({ provider: z.string(), openMs: z.number() }),
  }),
  z.object({
    type: z.literal('tool.started'),
    data: z.object({ step: z.number().int(), callId: z.string(), name: z.string(), input: z.string() }),
  }),
  z.object({
    type: z.literal('tool.ended'),
    data: z.object({
      step: z.number().int(),
      callId: z.string(),
      name: z.string(),
      ok: z.boolean(),
      output: z.string(),
      durationMs: z.number(),
    }),
  }),
  z.object({
    type: z.literal('workspace.created'),
    data: z.object({
      path: z.string(),
      branch: z.string(),
      baseCommit: z.string(),
      durationMs: z.number(),
      /** How its files were made; absent in logs written before there was a choice (a worktree). */
      method: workspaceMethodSchema.optional(),
    }),
  }),
  z.object({
    /** A worker taken up again after a restart has its workspace back, uncommitted work and all; `clearedLocks` are git locks its killed processes left. */
    type: z.literal('workspace.reopened'),
    data: z.object({ path: z.string(), branch: z.string(), clearedLocks: z.array(z.string()) }),
  }),
  z.object({
    type: z.literal('workspace.removed'),
    data: z.object({ path: z.string(), kept: z.boolean() }),
  }),
  z.object({
    /** The run's shared install of the repository's dependencies is ready (made now, or reused from an earlier run). */
    type: z.literal('dependencies.prepared'),
    data: z.object({ key: z.string(), layerDir: z.string(), reused: z.boolean(), bytes: z.number(), durationMs: z.number() }),
  }),
  z.object({
    /** There is no shared install for the run (or for one workspace), and why; agents install their own if they need one. */
    type: z.literal('dependencies.skipped'),
    data: z.object({ reason: z.string() }),
  }),
  z.object({
    /** The shared install was hard-linked into a new workspace. */
    type: z.literal('dependencies.linked'),
    data: z.object({ path: z.string(), files: z.number().int(), durationMs: z.number() }),
  }),
  z.object({
    /** Old shared installs were deleted from the cache. */
    type: z.literal('dependencies.collected'),
    data: z.object({ removed: z.array(z.string()), problems: z.array(z.string()) }),
  }),
  z.object({
    /**
     * How this run confines agents' commands: `bubblewrap`, the weaker `unshare`, or `none`
     * (unconfined, only when the user asked), in one line, and what network commands get.
     */
    type: z.literal('sandbox.opened'),
    data: z.object({ method: z.enum(['bubblewrap', 'unshare', 'none']), summary: z.string(), network: z.string() }),
  }),
  z.object({
    /** A command asked the run's network proxy for a host: let through when on the allow-list. */
    type: z.literal('network.requested'),
    data: z.object({ host: z.string(), port: z.number().int(), allowed: z.boolean() }),
  }),
  z.object({
    /** How this run makes workspaces, and why: the user's choice, or what the machine allows. */
    type: z.literal('workspace.method-chosen'),
    data: z.object({ method: workspaceMethodSchema, forced: z.boolean(), reason: z.string() }),
  }),
  z.object({
    /**
     * Work a workspace held that had not landed was saved before the workspace was removed:
     * uncommitted files committed as `commit` on `branch` (null when there were none), and
     * commits only a detached HEAD reached kept on `sideBranch`.
     */
    type: z.literal('workspace.salvaged'),
    data: z.object({
      path: z.string(),
      branch: z.string(),
      commit: z.string().nullable(),
      files: z.array(z.string()),
      sideBranch: z.string().nullable(),
      reason: z.string(),
    }),
  }),
  z.object({
    /** What the sweep at the start of a run did with workspaces an earlier run left behind. */
    type: z.literal('workspace.swept'),
    data: z.object({
      removed: z.array(z.string()),
      salvaged: z.array(z.string()),
      kept: z.array(z.object({ path: z.string(), reason: z.string() })),
      /** Shared files nothing used any more (overlay base checkouts), deleted. */
      deleted: z.array(z.string()),
      problems: z.array(z.string()),
    }),
  }),
  z.object({
    /** Starting another workspace would take workspaces past their disk cap: new workers wait until finished ones are reclaimed. */
    type: z.literal('workspace.quota-reached'),
    data: z.object({ usedBytes: z.number(), capBytes: z.number(), workspaces: z.number().int(), runningWorkers: z.number().int() }),
  }),
  z.object({
    type: z.literal('merge.attempted'),
    data: z.object({ branch: z.string(), mainBefore: z.string(), attempt: z.number().int() }),
  }),
  z.object({
    /**
     * A merge is about to move the trunk from `mainBefore` to `commit`. Recorded and made
     * durable before the trunk moves, so a restart can tell whether an interrupted merge
     * landed (`commit` reachable from the trunk) even when its `merge.landed` was never written.
     */
    type: z.literal('merge.intended'),
    data: z.object({ commit: z.string(), mainBefore: z.string(), branch: z.string() }),
  }),
  z.object({
    type: z.literal('merge.landed'),
    data: z.object({
      commit: z.string(),
      mainBefore: z.string(),
      attempts: z.number().int(),
      files: z.array(z.string()),
      durationMs: z.number(),
      /** Files whose concurrent appends colony merged itself, without the agent. */
      autoResolved: z.array(z.string()).optional(),
      /** Milliseconds the merge waited for the trunk's turn while other merges landed. */
      waitMs: z.number().optional(),
      /** 'in-process' when colony merged the trees itself, 'rebase' when git rebased the workspace. */
      via: z.enum(['in-process', 'rebase']).optional(),
    }),
  }),
  z.object({
    type: z.literal('merge.checked'),
    /** The merge check (`--merge-check`) ran on `commit`, the work replayed onto `mainBefore`. */
    data: z.object({ commit: z.string(), mainBefore: z.string(), passed: z.boolean(), durationMs: z.number() }),
  }),
  z.object({
    type: z.literal('merge.conflicted'),
    data: z.object({ files: z.array(z.string()), mainBefore: z.string() }),
  }),
  z.object({
    /**
     * colony is about to run a task's acceptance commands on the trunk at `commit`, the worker's
     * last landed commit, in a checkout of its own. Until `acceptance.checked`, the worker's
     * silence is the commands running, like a tool call's.
     */
    type: z.literal('acceptance.started'),
    data: z.object({ taskId: z.string(), commit: z.string(), commands: z.array(z.string()) }),
  }),
  z.object({
    /**
     * What a task's acceptance commands gave, recorded before its handoff (which carries the
     * verdict): `claimed` is the status the handoff states. `commit` is null and `skipped` says
     * why when nothing ran (nothing of the worker's landed, or the commit could not be checked out).
     */
    type: z.literal('acceptance.checked'),
    data: z.object({
      taskId: z.string(),
      claimed: handoffStatusSchema,
      commit: z.string().nullable(),
      passed: z.boolean(),
      skipped: z.string().nullable(),
      results: z.array(
        z.object({
          command: z.string(),
          exitCode: z.number().int().nullable(),
          timedOut: z.boolean(),
          durationMs: z.number(),
          /** The tail of its output, at most about 4,000 characters. */
          output: z.string(),
        }),
      ),
    }),
  }),
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
      /** The commands that must pass on the trunk once the task's work landed; absent when none. */
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
     * it is paused), or the user held or released the whole run with `colony andon` (`by:
     * 'user'`, `taskId` null: no task of the run is claimed while it is held; `holdSeq` is the
     * change's place in the task store). Without `by`, a planner's.
     */
    type: z.literal('andon.changed'),
    data: z.object({
      taskId: z.string().nullable(),
      paused: z.boolean(),
      reason: z.string(),
      by: z.enum(['planner', 'user']).optional(),
      holdSeq: z.number().int().optional(),
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
    /** colony ran the project's check command on a commit of the trunk (at the end of a run). */
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

/** What a caller hands to the store: the type and its payload. */
export const eventBodySchema = z.discriminatedUnion('type', bodies);
export type EventBody = z.infer<typeof eventBodySchema>;
export type EventType = EventBody['type'];

/** The fields every stored event carries besides its body. */
export interface EventEnvelope {
  /** Position in the log, assigned by the store; strictly increasing. */
  readonly seq: number;
  readonly v: number;
  /** Unique and sortable by creation time. */
  readonly id: string;
  readonly runId: string;
  /** The agent the event is about, or "system" for run-level events. */
  readonly agentId: string;
  /** Milliseconds since the Unix epoch. */
  readonly ts: number;
}

export type ColonyEvent = EventEnvelope & EventBody;

/** The payload type of one event type. */
export type EventData<T extends EventType> = Extract<EventBody, { type: T }>['data'];

export const EVENT_TYPES: readonly EventType[] = bodies.map((body) => body.shape.type.value);
