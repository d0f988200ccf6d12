import { z } from 'zod';
import { usageSchema, toolCallSchema, agentRoleSchema } from '../event-fields.js';
import { recordedRunSettingsSchema } from '../run-settings.js';

/** The events of runs, agents, their model calls and tool calls: the first part of the event union, in its order. */
export const runAgentBodies = [
  z.object({
    type: z.literal('run.started'),
    data: z.object({
      mode: z.string(),
      repo: z.string(),
      model: z.string(),
      title: z.string(),
      /**
       * The branch the run lands on, and whether colony made it for the run (from the commit
       * checked out) or it was there. Absent in runs recorded before runs had a trunk: they
       * landed on the branch checked out.
       */
      trunk: z
        .object({
          branch: z.string(),
          made: z.boolean(),
          commit: z.string(),
          checkedOut: z.string(),
          /**
           * Where the trunk lives for every host (`--origin`), without a password; for a run in
           * PostgreSQL without one, the repository itself. Absent for a run only its own process works on.
           */
          origin: z.string().optional(),
        })
        .optional(),
    }),
  }),
  z.object({
    /**
     * A worker host (`colony worker`) took up the run: its name, the most workers it runs at
     * once, the origin it lands on (no password) and its process.
     */
    type: z.literal('host.joined'),
    data: z.object({ host: z.string(), workers: z.number().int().positive(), origin: z.string(), pid: z.number().int() }),
  }),
  z.object({
    /**
     * The run could not bring its trunk here up to the origin's, where hosts land: the origin
     * did not answer, or its trunk no longer holds what landed (someone moved it back). Recorded
     * once per new reason; the run's own landings say the same when they meet it.
     */
    type: z.literal('trunk.unfollowed'),
    data: z.object({ origin: z.string(), reason: z.string() }),
  }),
  z.object({
    /** A worker host stopped working on the run: the run ended, or the host was stopped (its tasks released, `released` of them). */
    type: z.literal('host.left'),
    data: z.object({ host: z.string(), reason: z.string(), released: z.number().int().nonnegative() }),
  }),
  z.object({
    type: z.literal('run.ended'),
    data: z.object({ status: z.string(), durationMs: z.number() }),
  }),
  z.object({
    /** What the run was told, so `colony resume` goes on with the same settings. Recorded once, after `run.started`. */
    type: z.literal('run.configured'),
    data: z.object({ settings: recordedRunSettingsSchema }),
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
    /**
     * Someone other than colony moved the run's trunk so that landed work is gone from it:
     * `moved` to a commit without commits the run landed (a reset, an amend, a forced move;
     * `dropped` names them), or `reverted` by a commit on top that put landed files back as
     * they were (`files`), as a commit made from an index behind the landings does.
     */
    type: z.literal('trunk.rewritten'),
    data: z.object({
      kind: z.enum(['moved', 'reverted']),
      branch: z.string(),
      commit: z.string(),
      previous: z.string(),
      /** What git recorded of the move, as `git reflog` shows it. */
      action: z.string(),
      dropped: z.array(z.string()),
      files: z.array(z.string()),
      /**
       * The commit colony put the reverted files back with (`reverted` only), when the commit
       * that undid them was made from an index colony had not yet brought up to their landing.
       */
      restored: z.string().optional(),
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
      /**
       * Set for a standing notice, by its kind (`files-in-flight`, `main-view`, `main-failing`):
       * it is shown after the conversation in every request until the next of its kind
       * replaces it, and is never kept in the conversation. An empty message withdraws it.
       */
      notice: z.string().min(1).optional(),
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
    data: z.object({
      step: z.number().int(),
      model: z.string(),
      messages: z.number().int(),
      chars: z.number().int(),
      /** The most output tokens the request asked for; absent when it set no limit (and in logs written before colony set one). */
      maxOutputTokens: z.number().int().positive().optional(),
    }),
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
    type: z.literal('agent.unparked'),
    data: z.object({ step: z.number().int(), parkedMs: z.number() }),
  }),
  z.object({
    /**
     * The agent was rebuilt from its recorded conversation after colony stopped, and goes on in
     * the task's attempt `attempt` after model call `step`. Of that call's tool calls, `interrupted`
     * were running when colony stopped: they are answered (a `tool.ended` each) without running
     * them again. `notStarted` never started: they run now, as the rest of that turn.
     */
    type: z.literal('agent.restored'),
    data: z.object({
      attempt: z.number().int().positive(),
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
      /** Milliseconds of CPU the call's commands used, counted by their cgroup; absent where nothing counted it. */
      cpuMs: z.number().optional(),
    }),
  }),
] as const;
