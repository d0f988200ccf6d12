import type { ColonyEvent, EventData } from '../../events/event-types.js';
import type { AgentRole, BudgetMeasure } from '../../events/event-fields.js';
import type { HandoffStatus } from '../../events/handoff.js';
import type { InboxMessage, TaskRecord, TaskStatus } from '../../store/tasks/task-store.js';
import type { GreenHealth } from '../green-health.js';

/* A run's status (`foldRunStatus` in run-status.ts) and its parts. */

/**
 * What an agent is doing: `waiting` is a planner with nothing to do until a message arrives;
 * `parked` an agent waiting for its provider to answer again; the rest are how it ended.
 */
export type AgentState = 'running' | 'waiting' | 'parked' | HandoffStatus;

/** One agent of the tree. Plain data: scripts read it as JSON, so the names are stable. */
export interface AgentStatus {
  readonly id: string;
  readonly role: AgentRole;
  /** The agent that published this agent's task; null for the root planner and `colony work`. */
  readonly parentId: string | null;
  readonly state: AgentState;
  readonly taskId: string;
  readonly title: string;
  /** Model calls so far, or as counted by the agent when it ended. */
  readonly steps: number;
  /** Input plus output tokens of its model calls. */
  readonly tokens: number;
  readonly costUsd: number;
  /** Milliseconds since the epoch. */
  readonly startedAt: number;
  readonly endedAt: number | null;
  /** Why it ended or failed, as recorded; null while it runs. */
  readonly reason: string | null;
  /** The summary of its handoff (a worker's) or of its latest finish (a planner's); null before. */
  readonly summary: string | null;
  /** Its scratchpad as it last wrote it; null before its first write. */
  readonly scratchpad: string | null;
  /** How often its conversation was summarised near its context window. */
  readonly compactions: number;
  /** The worker host it runs on (`colony worker --name`); null for the run's own process. */
  readonly host: string | null;
}

/** A worker host of the run (`colony worker`), as it last said. */
export interface HostStatus {
  readonly name: string;
  /** The most workers it runs at once. */
  readonly workers: number;
  /** The origin it lands on. */
  readonly origin: string;
  readonly state: 'working' | 'left';
  /** Why it left; null while it works. */
  readonly reason: string | null;
  /** When it joined, or left. */
  readonly since: number;
  /** Tasks it let go when it left, over all its leavings. */
  readonly released: number;
}

/** A run as `colony status` reports it, live or finished. Plain data: scripts read it as JSON. */
export interface RunStatus {
  readonly run: {
    readonly id: string;
    /** 'running' while the run has not ended, else the status it ended with. */
    readonly state: string;
    readonly mode: string;
    readonly repo: string;
    readonly model: string;
    readonly title: string;
    /** The branch the run lands on; null for runs recorded before runs had one (they landed on the branch checked out). */
    readonly trunk: string | null;
    /** The branch that was checked out when the run started; null as for `trunk`. */
    readonly checkedOut: string | null;
    readonly startedAt: number;
    /** How many times `colony resume` took the run up again after it stopped or crashed. */
    readonly resumes: number;
    readonly endedAt: number | null;
    /** The run's own measure once it ended; until then from its start to `now` (or its last event). */
    readonly durationMs: number;
    readonly lastEventAt: number;
  };
  /** Every task of the run except the root planner's own. */
  readonly tasks: { readonly total: number; readonly byStatus: Readonly<Record<TaskStatus, number>> };
  readonly handoffs: { readonly delivered: number };
  readonly commits: { readonly landed: number };
  /**
   * Worker tasks whose acceptance commands colony ran on main after the worker ended, by
   * their latest verdict: `falseClaims` are those handed off `done` whose checks failed (among
   * `failed`); `notRun` had nothing landed to check.
   */
  readonly acceptance: AcceptanceStatus;
  /**
   * `input` counts every input token; `cachedInput` of them were read from the provider's prompt
   * cache and `cacheWrite` written to it.
   */
  readonly tokens: {
    readonly input: number;
    readonly output: number;
    readonly cachedInput: number;
    readonly cacheWrite: number;
    readonly total: number;
  };
  /** The sum of every priced model call; calls without a price count as 0. */
  readonly costUsd: number;
  /** False when some model call had no price, so `costUsd` is a lower bound. */
  readonly costKnown: boolean;
  readonly modelCalls: number;
  readonly toolCalls: number;
  /** Conversations summarised near their context window, and the tokens those summaries cost (in `tokens` too). */
  readonly compaction: { readonly count: number; readonly tokens: number };
  /** Tasks whose andon is pulled: nothing below them is claimed until it is released. */
  readonly pausedTaskIds: readonly string[];
  /** The user's hold on the whole run (`colony andon`): no task is claimed until it is released; null when none. */
  readonly userAndon: UserAndon | null;
  /** The most workers that may run at once: the run's `--workers`, or what the user set since (`colony workers`); null before it was recorded. */
  readonly workers: number | null;
  /** In the order they started. */
  readonly agents: readonly AgentStatus[];
  /** Spend against the run's limits; null when the run set none. */
  readonly budget: BudgetStatus | null;
  /** How the run confined its agents' commands; null for a run that recorded none. */
  readonly sandbox: SandboxStatus | null;
  /** The run's latest setup (its dependency install); null for a run that recorded none. */
  readonly setup: SetupStatus | null;
  /** The green branch and main's health; null when the run recorded no green event and its settings have no green loop. */
  readonly green: GreenStatus | null;
  /** Work of workspaces removed before it landed, kept under refs of colony's own, in the order it was salvaged. */
  readonly salvaged: readonly SalvagedWorkStatus[];
  /** Moves of the trunk by someone else that took landed work off it (`trunk.rewritten`), in order. */
  readonly trunkRewrites: readonly TrunkRewriteStatus[];
  /** The worker hosts that joined the run (`colony worker`), in the order they joined; empty for a run on one machine. */
  readonly hosts: readonly HostStatus[];
}

/** One move of the run's trunk that took landed work off it. */
export type TrunkRewriteStatus = EventData<'trunk.rewritten'>;

/** One workspace's salvaged work (`workspace.salvaged`). */
export interface SalvagedWorkStatus {
  /** Who recorded it: the worker whose workspace it was, or `system` for one an earlier run left behind. */
  readonly agentId: string;
  /** The ref holding the branch's commits (`refs/colony/salvaged/…`; a branch name in logs earlier versions wrote). */
  readonly ref: string;
  /** The ref or branch holding what only a detached HEAD reached, or null. */
  readonly sideRef: string | null;
  /** How many uncommitted files colony committed before keeping it. */
  readonly files: number;
}

/**
 * Where the green branch points and how healthy main was (see GreenHealth for how red time is
 * measured): everything of GreenHealth but the list per move of the branch, which grows with
 * the run.
 */
export type GreenStatus = Omit<GreenHealth, 'commitsBetweenGreen'>;

/** The user's andon on a whole run, as the log recorded it. */
export interface UserAndon {
  readonly reason: string;
  /** When it was recorded, in milliseconds since the epoch. */
  readonly since: number;
}

/** Counts of tasks by the verdict on their acceptance commands. */
export interface AcceptanceStatus {
  readonly passed: number;
  readonly failed: number;
  readonly notRun: number;
  readonly falseClaims: number;
}

/**
 * The run's setup as it stands: `installing` since `startedAt`, `ready` (installed or reused),
 * `failed` (the run stopped before any agent) or `skipped` (no install, with why).
 */
export interface SetupStatus {
  readonly state: 'installing' | 'ready' | 'failed' | 'skipped';
  /** The install's command; null when none ran (a reused layer recorded before commands were, or a skip). */
  readonly command: string | null;
  readonly registry: string | null;
  /** When the install started (the event's time), or null when none ran. */
  readonly startedAt: number | null;
  /** How long it took, once it ended. */
  readonly durationMs: number | null;
  readonly bytes: number | null;
  readonly reused: boolean;
  /** Why it failed or was skipped. */
  readonly reason: string | null;
}

/** The run's sandbox: its method, its network policy, and what its egress proxy decided. */
export interface SandboxStatus {
  readonly method: 'bubblewrap' | 'unshare' | 'none';
  readonly network: string;
  readonly networkAllowed: number;
  readonly networkRefused: number;
}

/** One of the run's limits and what was spent against it (time in milliseconds). */
export interface BudgetFigure {
  readonly limit: number;
  readonly spent: number;
}

/** A scope's limit that was warned about or used up: the run, or a delegated subtree. */
export interface BudgetEvent {
  readonly taskId: string;
  readonly scope: 'run' | 'subtree';
  readonly measure: BudgetMeasure;
  readonly spent: number;
  readonly limit: number;
}

/** The run's limits as set with `--budget-tokens`, `--budget-usd` and `--max-hours`, with spend against each. */
export interface BudgetStatus {
  readonly tokens: BudgetFigure | null;
  readonly usd: BudgetFigure | null;
  readonly time: BudgetFigure | null;
  /** Scopes that spent 80% of a limit, in order. */
  readonly warned: readonly BudgetEvent[];
  /** Scopes whose limit was used up, in order. */
  readonly exhausted: readonly BudgetEvent[];
}

/** What the event log does not hold: the task table and the inboxes, read from the task store. */
export interface RunStatusContext {
  readonly tasks: readonly TaskRecord[];
  readonly deliveredHandoffs: readonly InboxMessage[];
  /** The clock for a live run's wall time; without it the time runs to the last event. */
  readonly now?: number;
}

export interface FoldRunStatusInput extends RunStatusContext {
  readonly events: readonly ColonyEvent[];
  /** The run to report; defaults to the one started last in `events`. */
  readonly runId?: string;
}
