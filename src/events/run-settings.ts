import { z } from 'zod';

const stepsByKind = z.object({ planner: z.number().int().positive().nullable(), worker: z.number().int().positive().nullable() });

/**
 * Everything `colony run` was told that a resumed run needs to go on the same way: the models
 * (as specs, with where their keys come from, never the keys), the tree's limits, the sandbox
 * and the budgets. Recorded once, in `run.configured`, right after `run.started`.
 */
export const runSettingsSchema = z.object({
  /** The goal file as given; the goal itself is the root task's brief. */
  goalPath: z.string(),
  workerModel: z.string(),
  plannerModel: z.string(),
  /** `--base-url`, or null. */
  baseUrl: z.string().nullable(),
  /** The name of the environment variable holding the API key (`--api-key-env`), or null; never the key. */
  apiKeyEnv: z.string().nullable(),
  /** Prices given with `--prices`, in US dollars per million tokens. */
  prices: z.record(
    z.string(),
    z.object({ inputPerMTok: z.number(), outputPerMTok: z.number(), cachedInputPerMTok: z.number().optional() }),
  ),
  workers: z.number().int().positive(),
  workerMaxSteps: z.number().int().positive(),
  plannerMaxSteps: z.number().int().positive(),
  mergeCheck: z.string().nullable(),
  sharedDependencies: z.boolean(),
  workspaces: z.enum(['auto', 'overlay', 'worktree']),
  workspaceDiskCapBytes: z.number().nullable(),
  limits: z.object({ tokens: z.number().nullable(), usd: z.number().nullable(), maxHours: z.number().nullable() }),
  sandbox: z.object({
    method: z.enum(['bubblewrap', 'unshare', 'none']),
    network: z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('none') }),
      z.object({ kind: z.literal('all') }),
      z.object({ kind: z.literal('hosts'), hosts: z.array(z.string()).readonly() }),
    ]),
    limits: z
      .object({
        memoryBytes: z.number().optional(),
        maxProcesses: z.number().optional(),
        cpuSeconds: z.number().optional(),
        maxFileBytes: z.number().optional(),
      })
      .optional(),
  }),
  leaseMs: z.number().int().positive(),
  /** A worker with no event for this long is stopped with a failure handoff. */
  hangAfterMs: z.number().int().positive(),
  /** Context windows, compaction and reminders (see AgentFreshness); absent in runs recorded before they existed, which get the defaults. */
  freshness: z
    .object({
      contextWindows: z.object({ all: z.number().int().positive().nullable(), byModel: z.record(z.string(), z.number().int().positive()) }),
      threshold: z.number().positive().max(1),
      compaction: z.boolean(),
      keptTurns: z.number().int().nonnegative(),
      reflectEvery: stepsByKind,
      scratchpadEvery: stepsByKind,
      evidenceFirst: z.boolean(),
    })
    .optional(),
  /** The green branch loop (see GreenSettings); absent in runs recorded before it existed, which get the defaults. */
  green: z
    .object({
      /** `--check`, or null to read it from the goal's colony-spec or the project's files at each snapshot. */
      check: z.string().nullable(),
      /** Snapshot after this many commits landed on main since the last one; null for no count. */
      everyCommits: z.number().int().positive().nullable(),
      /** Snapshot after this many milliseconds when main moved since the last one; null for no clock. */
      everyMs: z.number().int().positive().nullable(),
      /** The branch a passing snapshot moves forward. */
      branch: z.string(),
      /** Tag each commit green moves to (`green-<n>`). */
      tag: z.boolean(),
      /** How long one check may run before it counts as failed. */
      checkTimeoutMs: z.number().int().positive(),
    })
    .optional(),
});

export type RunSettings = z.infer<typeof runSettingsSchema>;
