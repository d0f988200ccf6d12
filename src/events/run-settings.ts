import { z } from 'zod';

/**
 * A run's settings: what `colony run` was told, recorded once in `run.configured` right after
 * `run.started`, so that `colony resume` goes on the same way. This file is their one source:
 * the shape, what each means, and the default of every setting a user may leave out. The CLI
 * hands its flags over as a `RunSettingsInput`, `resolveRunSettings` fills in the defaults, and
 * the run and its agents read the parsed `RunSettings` and nothing else.
 */

const stepsByKind = z.object({ planner: z.number().int().positive().nullable(), worker: z.number().int().positive().nullable() });

/** A number of steps for each kind of agent; null turns the thing off for that kind. */
export type StepsByKind = z.infer<typeof stepsByKind>;

/** A number of tokens for every model, or null, and numbers by model key (`openai:gpt-5`, `sim`). */
const tokensByModel = z.object({ all: z.number().int().positive().nullable(), byModel: z.record(z.string(), z.number().int().positive()) });

/**
 * What keeps a run's agents fresh over a long run: the context windows, the output limits and
 * when to compact, the reminders and their intervals, and whether a claim of done needs
 * evidence first.
 */
const freshnessSchema = z.object({
  /** The user's context windows (`--context-window`): one size for every model, and sizes by model key. */
  contextWindows: tokensByModel.default({ all: null, byModel: {} }),
  /** The user's output limits (`--max-output-tokens`), the most tokens one answer may have: one for every model, and limits by model key. */
  outputLimits: tokensByModel.default({ all: null, byModel: {} }),
  /** Share of the window above which a conversation is made smaller (0.8: at 80%). */
  threshold: z.number().positive().max(1).default(0.8),
  /** false (`--no-compaction`): conversations are never cut, and may outgrow their window. */
  compaction: z.boolean().default(true),
  /** Answers kept as they are after a summary. */
  keptTurns: z.number().int().nonnegative().default(4),
  reflectEvery: stepsByKind.default({ planner: 40, worker: 25 }),
  scratchpadEvery: stepsByKind.default({ planner: 20, worker: 15 }),
  /** A worker's first claim of done without evidence is sent back for it. */
  evidenceFirst: z.boolean().default(true),
});

/** The green branch loop: what it checks, how often it snapshots main, and which branch it moves. */
const greenSchema = z.object({
  /** `--check`, or null to read it from the goal's colony-spec or the project's files at each snapshot. */
  check: z.string().nullable().default(null),
  /** Snapshot after this many commits landed on main since the last one; null for no count. */
  everyCommits: z.number().int().positive().nullable().default(10),
  /** Snapshot after this many milliseconds when main moved since the last one; null for no clock. */
  everyMs: z.number().int().positive().nullable().default(10 * 60_000),
  /** The branch a passing snapshot moves forward. */
  branch: z.string().default('green'),
  /** Tag each commit green moves to (`green-<n>`). */
  tag: z.boolean().default(false),
  /** How long one check may run before it counts as failed. */
  checkTimeoutMs: z.number().int().positive().default(15 * 60_000),
});

/** How agents' commands are confined: bubblewrap with no network and the sandbox's default limits unless told otherwise. */
const networkSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none') }),
  z.object({ kind: z.literal('all') }),
  z.object({ kind: z.literal('hosts'), hosts: z.array(z.string()).readonly() }),
]);

const sandboxSchema = z.object({
  method: z.enum(['bubblewrap', 'unshare', 'none']).default('bubblewrap'),
  network: networkSchema.default({ kind: 'none' }),
  /**
   * What the npm, pnpm or yarn install of the setup reaches: the package registries the
   * project names, through an egress proxy of its own that records each request; `all` (the
   * host's network) with `--sandbox none`, and in logs written before.
   */
  setupNetwork: networkSchema.default({ kind: 'all' }),
  /** Limits changed from the sandbox's defaults (see DEFAULT_COMMAND_LIMITS); absent ones keep theirs. */
  limits: z
    .object({
      memoryBytes: z.number().optional(),
      maxProcesses: z.number().optional(),
      cpuSeconds: z.number().optional(),
      maxFileBytes: z.number().optional(),
    })
    .optional(),
});

/**
 * The settings as `run.configured` holds them. `freshness` and `green` are absent in runs
 * recorded before they existed; `resolveRunSettings` gives those runs the defaults.
 */
export const recordedRunSettingsSchema = z.object({
  /**
   * The goal file as given, or for a goal given inline (`--goal "..."`) the file colony wrote it
   * to in the state directory; the goal itself is the root task's brief.
   */
  goalPath: z.string(),
  /** Whether the goal came as a file or inline; runs recorded before `--goal` came from a file. */
  goalSource: z.enum(['file', 'inline']).default('file'),
  workerModel: z.string(),
  plannerModel: z.string(),
  /** `--base-url`, or null. */
  baseUrl: z.string().nullable().default(null),
  /** The name of the environment variable holding the API key (`--api-key-env`), or null; never the key. */
  apiKeyEnv: z.string().nullable().default(null),
  /** Prices given with `--prices`, in US dollars per million tokens. */
  prices: z
    .record(z.string(), z.object({ inputPerMTok: z.number(), outputPerMTok: z.number(), cachedInputPerMTok: z.number().optional(), cacheWriteInputPerMTok: z.number().optional() }))
    .default({}),
  /**
   * The branch the run lands on (`--trunk`, or `colony/<short goal name>` made for the run).
   * Null in runs recorded before it existed: they landed on the branch checked out.
   */
  trunk: z.string().nullable().default(null),
  workers: z.number().int().positive(),
  workerMaxSteps: z.number().int().positive(),
  plannerMaxSteps: z.number().int().positive(),
  /** The `--merge-check` command every worker's merge must pass on its work replayed onto main, or null for none. */
  mergeCheck: z.string().nullable().default(null),
  /** Install main's npm dependencies once and link them into every worker's workspace. */
  sharedDependencies: z.boolean().default(true),
  /**
   * The project's own setup (`--setup`, `--setup-inputs`): a command run once per hash of the
   * input files, whose result every workspace shares in place of npm's install; null for none.
   */
  setup: z.object({ command: z.string(), inputs: z.array(z.string()) }).nullable().default(null),
  /** Ask each agent's provider to cache its prompt prefix (`--no-prompt-cache`: never). */
  promptCache: z.boolean().default(true),
  /** How workspaces are made; `auto` takes overlay mounts where they work. */
  workspaces: z.enum(['auto', 'overlay', 'worktree']).default('auto'),
  /** The most disk all workspaces may take together; null for a fifth of the free space at the start. */
  workspaceDiskCapBytes: z.number().nullable().default(null),
  /** The run's spending and time limits (`--budget-tokens`, `--budget-usd`, `--max-hours`); null for none. */
  limits: z
    .object({ tokens: z.number().nullable(), usd: z.number().nullable(), maxHours: z.number().nullable() })
    .default({ tokens: null, usd: null, maxHours: null }),
  sandbox: sandboxSchema.prefault({}),
  /** How long a lease lasts without a heartbeat. */
  leaseMs: z.number().int().positive().default(30_000),
  /**
   * A worker with no event for this long is stopped with a failure handoff: longer than the
   * longest command may run (30 minutes) and a merge after it.
   */
  hangAfterMs: z.number().int().positive().default(40 * 60_000),
  freshness: freshnessSchema.optional(),
  green: greenSchema.optional(),
});

/** What a run goes by: every setting, the defaults filled in (for runs recorded before a setting existed too). */
export const runSettingsSchema = recordedRunSettingsSchema.extend({
  freshness: freshnessSchema.prefault({}),
  green: greenSchema.prefault({}),
});

export type RunSettings = z.output<typeof runSettingsSchema>;

/** Settings as a caller gives them: the goal, the models, the tree's size; anything else left out takes its default. */
export type RunSettingsInput = z.input<typeof runSettingsSchema>;

/** The settings as `run.configured` holds them (see recordedRunSettingsSchema). */
export type RecordedRunSettings = z.output<typeof recordedRunSettingsSchema>;

/** `given` with every default filled in; throws on a value out of range, which only a caller's bug passes. */
export function resolveRunSettings(given: RunSettingsInput | RecordedRunSettings): RunSettings {
  return runSettingsSchema.parse(given);
}

/** Context windows, output limits, compaction and reminders for every agent (see freshnessSchema). */
export type FreshnessSettings = RunSettings['freshness'];

/** How the green loop runs (see greenSchema). */
export type GreenSettings = RunSettings['green'];

/** How agents' commands are confined (see sandboxSchema). */
export type SandboxSettings = RunSettings['sandbox'];

export const DEFAULT_FRESHNESS: FreshnessSettings = freshnessSchema.parse({});

/**
 * A snapshot after every 10 landed commits or 10 minutes (when main moved), whichever comes
 * first; the check read from the goal or the project; `green` moved, untagged; 15 minutes a check.
 */
export const DEFAULT_GREEN_SETTINGS: GreenSettings = greenSchema.parse({});

/** Confined by bubblewrap, with no network and the default limits. */
export const DEFAULT_SANDBOX_SETTINGS: SandboxSettings = sandboxSchema.parse({});
