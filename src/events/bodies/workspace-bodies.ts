import { z } from 'zod';
import { workspaceMethodSchema } from '../event-fields.js';
import { handoffStatusSchema } from '../handoff.js';

/** The events of workspaces, dependency layers, the sandbox, merges and acceptance checks: the second part of the event union. */
export const workspaceBodies = [
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
    /**
     * The run's setup is installing: `command` (npm's install, `pnpm@10 install …` for a manager
     * colony fetches first, or the project's `setup`; the whole command line is in a failure) from
     * `registry` (null for a setup that names none), for `packages` the inputs ask for (null when
     * colony cannot tell). Recorded when it starts (`elapsedMs` 0) and again while it goes, so a
     * long install shows it is alive.
     */
    type: z.literal('dependencies.installing'),
    data: z.object({ command: z.string(), registry: z.string().nullable(), packages: z.number().int().nullable(), elapsedMs: z.number() }),
  }),
  z.object({
    /**
     * A shared install of the repository's dependencies is ready (made now, or reused from an
     * earlier run): the run's, at its start, and a new one whenever main moves to a commit with
     * other inputs (a package a worker added landed).
     */
    type: z.literal('dependencies.prepared'),
    data: z.object({
      key: z.string(),
      layerDir: z.string(),
      reused: z.boolean(),
      bytes: z.number(),
      durationMs: z.number(),
      /** The command that made the layer; absent in logs written before setups other than npm's. */
      command: z.string().optional(),
      /** The commit whose inputs it was made from; absent in logs written before layers followed main. */
      commit: z.string().optional(),
    }),
  }),
  z.object({
    /** The run's setup failed: the run stops before any agent starts, and `fix` says what to do. */
    type: z.literal('dependencies.failed'),
    data: z.object({ error: z.string(), fix: z.string(), durationMs: z.number() }),
  }),
  z.object({
    /** There is no shared install for the run (or for one workspace), and why; agents install their own if they need one. */
    type: z.literal('dependencies.skipped'),
    data: z.object({ reason: z.string() }),
  }),
  z.object({
    /**
     * A shared install was hard-linked into a new workspace; or, with `changed`, a worker's
     * workspace got the install of its own files after it changed those (package.json, a
     * lockfile), linked or stacked in place of the one it had.
     */
    type: z.literal('dependencies.linked'),
    data: z.object({ path: z.string(), files: z.number().int(), durationMs: z.number(), changed: z.array(z.string()).optional() }),
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
    data: z.object({
      method: z.enum(['bubblewrap', 'unshare', 'none']),
      summary: z.string(),
      network: z.string(),
      /** What the setup's npm, pnpm or yarn install reaches; absent in logs written before it was narrowed. */
      setupNetwork: z.string().optional(),
    }),
  }),
  z.object({
    /** A command asked the run's network proxy for a host: let through when on the allow-list. */
    type: z.literal('network.requested'),
    data: z.object({
      host: z.string(),
      port: z.number().int(),
      allowed: z.boolean(),
      /** True for a request of the setup's install (through the setup's own proxy, to the package registries). */
      setup: z.boolean().optional(),
    }),
  }),
  z.object({
    /** How this run makes workspaces, and why: the user's choice, or what the machine allows. */
    type: z.literal('workspace.method-chosen'),
    data: z.object({ method: workspaceMethodSchema, forced: z.boolean(), reason: z.string() }),
  }),
  z.object({
    /**
     * Work a workspace held that had not landed was saved before the workspace was removed:
     * uncommitted files committed as `commit` (null when there were none), kept with the
     * branch's commits under the ref `branch` (`refs/colony/salvaged/…`; a branch name in logs
     * earlier versions wrote), and commits only a detached HEAD reached kept under `sideBranch`.
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
     * A merge is about to move main from `mainBefore` to `commit`. Recorded and made
     * durable before main moves, so a restart can tell whether an interrupted merge
     * landed (`commit` reachable from main) even when its `merge.landed` was never written.
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
      /** Milliseconds the merge waited for main's turn while other merges landed. */
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
    data: z.object({
      files: z.array(z.string()),
      mainBefore: z.string(),
      /** Why colony left files it settles when it can (a package.json and its lockfile) to the agent; absent when it did not try. */
      unsettled: z.string().optional(),
    }),
  }),
  z.object({
    /**
     * colony is about to run a task's acceptance commands on main at `commit`, the worker's
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
          /** Milliseconds of CPU it used, counted by its cgroup; absent where nothing counted it. */
          cpuMs: z.number().optional(),
          /** The tail of its output, at most about 4,000 characters. */
          output: z.string(),
          /** Of a failed command's failure lines, those main's last green check showed before the worker's first landing; absent when none. */
          alreadyFailing: z.array(z.string()).optional(),
          /** With `alreadyFailing`: its other failure lines. */
          newFailures: z.array(z.string()).optional(),
        }),
      ),
    }),
  }),
] as const;
