import type { AgentRole } from '../../events/event-fields.js';
import type { GreenHealth } from '../green-health.js';

/* A RunAnalysis (`analyzeRun` in run-analysis.ts) and its sections, one question each. */

/**
 * The commands agents ran (`run_command`) and how every tool fared. A command fails when it
 * could not start or did not exit 0: the tool itself reports a non-zero exit as ok, as
 * information for the model.
 */
export interface CommandAnalysis {
  /** Commands run to the end (a `tool.ended` each). */
  readonly runs: number;
  readonly failures: number;
  /**
   * CPU the commands used, in milliseconds, and how many of them it was counted for (their
   * cgroup counted it: a confined run); both 0 where nothing counted it.
   */
  readonly cpuMs: number;
  readonly cpuCounted: number;
  /** The longest command runs, slowest first. */
  readonly slowest: readonly CommandRun[];
  /** Command texts that failed, the most failures first. */
  readonly failing: readonly FailingCommand[];
  /** Distinct command texts that failed at least once. */
  readonly failingTotal: number;
  /** Every tool by name, the most failures first: calls ended, and those that ended not ok. */
  readonly tools: readonly ToolFailures[];
  /** colony's refusals that held an agent to the protocol, by the words they open with; kinds never seen left out. */
  readonly catches: readonly ProtocolCatch[];
}

export interface ProtocolCatch {
  /** The refusal's opening words (`Not landed:`, `Not published now:`...). */
  readonly opening: string;
  readonly calls: number;
}

export interface CommandRun {
  readonly agentId: string;
  /** The task of the agent that ran it; null for an agent that never recorded its start. */
  readonly taskId: string | null;
  /** The command text as the agent sent it in its `tool.started` input. */
  readonly command: string;
  readonly durationMs: number;
  /** It started and exited 0. */
  readonly ok: boolean;
  /** When it ended, in milliseconds since the epoch. */
  readonly at: number;
}

export interface FailingCommand {
  readonly command: string;
  readonly runs: number;
  readonly failures: number;
  /** failures / runs, from 0 to 1. */
  readonly share: number;
  /**
   * The end of the last failure's output (its status line and the last of what it printed).
   * Empty only in a log of hundreds of different failing commands, for one that failed too
   * rarely to keep its sample.
   */
  readonly sampleOutput: string;
}

export interface ToolFailures {
  readonly tool: string;
  readonly calls: number;
  readonly failures: number;
}

/** Agents that went quiet: stopped by colony for hanging, or with long silences between their own events. */
export interface StallAnalysis {
  /** `agent.hung`: workers colony stopped for recording nothing past the hang limit. */
  readonly hung: readonly HungAgent[];
  /**
   * Each agent's longest silence between two of its own events, the longest first. Time an
   * agent spent waiting for messages (`agent.waiting`) or parked on an unavailable provider
   * (`agent.parked`) is not silence, nor is the time a run was down before `colony resume`. An
   * agent still going at the end of the log is measured up to the run's last event.
   */
  readonly longestSilences: readonly AgentSilence[];
}

export interface HungAgent {
  readonly agentId: string;
  readonly taskId: string;
  readonly silentMs: number;
  readonly limitMs: number;
  readonly at: number;
}

export interface AgentSilence {
  readonly agentId: string;
  readonly role: AgentRole | null;
  readonly taskId: string | null;
  readonly silentMs: number;
  /** When the silence began: the agent's event before it. */
  readonly from: number;
  /** The type of the event the silence followed. */
  readonly after: string;
  /** The type of the event that broke it; null when the agent was still silent at the end of the log. */
  readonly endedBy: string | null;
}

/** One agent calling the same tool with the same input three or more times in a row. */
export interface LoopAnalysis {
  /** The longest repeats first. */
  readonly loops: readonly ToolLoop[];
  /** Every run of repeats found, listed or not. */
  readonly total: number;
}

export interface ToolLoop {
  readonly agentId: string;
  readonly taskId: string | null;
  readonly tool: string;
  readonly input: string;
  /** Calls in a row with this tool and input. */
  readonly repeats: number;
  /** When the first of them started. */
  readonly at: number;
}

/**
 * Files merges collided on: textual conflicts handed back to the agent (`merge.conflicted`),
 * and concurrent appends colony merged itself (`merge.landed.autoResolved`), counted apart.
 */
export interface ConflictAnalysis {
  /** `merge.conflicted` events. */
  readonly conflictedMerges: number;
  /** Merges that landed with at least one file colony resolved itself. */
  readonly autoResolvedMerges: number;
  /** By conflicts plus auto-resolutions, the most first. */
  readonly files: readonly ConflictFile[];
}

export interface ConflictFile {
  readonly file: string;
  readonly conflicted: number;
  readonly autoResolved: number;
}

/**
 * Work done more than once: retry chains (a task published again with `retryOf` pointing at an
 * earlier one, and so on) and tasks claimed more than once (their agent's runner died or was
 * restarted). One entry per chain, named by its first task.
 */
export interface RetryAnalysis {
  /** The most attempts first. */
  readonly tasks: readonly RetriedTask[];
  /** Every chain retried or claimed again, listed or not. */
  readonly total: number;
}

export interface RetriedTask {
  /** The chain's first task: the one published before any retry. */
  readonly taskId: string;
  readonly title: string;
  /** Every task of the chain in the order published, the first one included. */
  readonly chain: readonly string[];
  /** Claims over the whole chain: every agent that took one of its tasks up. */
  readonly attempts: number;
  /** Why attempts failed, in order: failed handoffs' summaries and concerns, `agent.failed` and `agent.hung`. */
  readonly reasons: readonly TaskReason[];
  /** How the chain's last task ended (its delivered handoff's status); null while it is open. */
  readonly outcome: string | null;
}

export interface TaskReason {
  readonly taskId: string;
  readonly reason: string;
}

/** A task whose agent died: `agent.failed`, `agent.hung`, or a failure handoff colony wrote for it. */
export interface CrashedTask {
  readonly taskId: string;
  readonly title: string;
  /** The agent that crashed ("system" when colony could not start one). */
  readonly agentId: string;
  readonly role: AgentRole | null;
  readonly how: 'agent-failed' | 'hung' | 'synthetic-handoff';
  /** The first word of its crash: the failure reason, the hang, or the synthetic handoff's summary. */
  readonly reason: string;
  readonly at: number;
}

/**
 * Where the tokens and money went, by task and by subtree (a task and everything published
 * below it, through `task.created.parentTaskId`). Agents count toward the task they ran
 * (`agent.started.data.taskId`). Calls without a price count as $0; `costKnown` says so.
 */
export interface CostAnalysis {
  readonly costUsd: number;
  readonly tokens: number;
  readonly costKnown: boolean;
  /** The costliest tasks, by dollars then tokens. */
  readonly tasks: readonly TaskCost[];
  /** The costliest subtrees of tasks with children, by dollars then tokens; the root's is the whole run. */
  readonly subtrees: readonly SubtreeCost[];
}

export interface TaskCost {
  readonly taskId: string;
  readonly title: string;
  /** 'worker' or 'planner'; null for a task the log never recorded as created. */
  readonly kind: string | null;
  /** Input plus output tokens. */
  readonly tokens: number;
  readonly costUsd: number;
}

export interface SubtreeCost extends TaskCost {
  /** Tasks in the subtree, its own included. */
  readonly tasks: number;
}

export interface RoleUsage {
  readonly agents: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens: number;
  /** Input plus output. */
  readonly totalTokens: number;
  readonly costUsd: number;
}

/** From a task's `task.created` to the first `merge.landed` of an agent that ran it. */
export interface LandingTimes {
  /** Tasks that landed something. */
  readonly count: number;
  /** Nearest-rank percentiles of the landed tasks' times; null when none landed. */
  readonly medianMs: number | null;
  readonly p90Ms: number | null;
  readonly maxMs: number | null;
  /** The slowest to land first. */
  readonly slowest: readonly LandingTime[];
}

export interface LandingTime {
  readonly taskId: string;
  readonly title: string;
  readonly ms: number;
}

/**
 * How often main, or what was about to become main, was red: the project check on main
 * (`main.checked`), the merge check on each merge (`merge.checked`), tasks' acceptance
 * commands on main (`acceptance.checked`; those skipped because nothing ran are not
 * counted) and the green loop's snapshots of main (`green.checked`).
 */
export interface MainHealth {
  readonly main: CheckCounts;
  readonly merges: CheckCounts;
  readonly acceptance: CheckCounts;
  /** Green snapshots: those that did not pass failed or timed out. */
  readonly snapshots: CheckCounts;
  /** The four together. */
  readonly all: CheckCounts;
  /** The last check of main; null when main was never checked. */
  readonly lastMain: { readonly commit: string; readonly passed: boolean; readonly at: number } | null;
  /** The green branch and the time main was red; null when the run recorded no green event and its settings have no green loop. */
  readonly green: GreenAnalysis | null;
}

/** The green health of the run (see GreenHealth for how red time is measured), with its latest bisects. */
export interface GreenAnalysis extends GreenHealth {
  /** The latest bisects, oldest first; `bisects` counts them all. */
  readonly bisected: readonly GreenBisect[];
}

/** A red snapshot's new failure, bisected to the commit that brought it. */
export interface GreenBisect {
  /** When it was recorded, in milliseconds since the epoch. */
  readonly at: number;
  /** The red snapshot's commit. */
  readonly snapshot: string;
  /** The first commit that fails so; null when main already failed so at the run's start. */
  readonly firstBad: string | null;
  /** `firstBad`'s subject line. */
  readonly subject: string;
  /** The task whose merge landed `firstBad`, the agent that merged it, and the planner that owns the task. */
  readonly taskId: string | null;
  readonly agentId: string | null;
  readonly plannerTaskId: string | null;
  /** The first of its failure lines. */
  readonly failures: readonly string[];
  /** All of its failure lines, listed or not. */
  readonly failureCount: number;
  /** The same first bad commit was bisected before: no second message went out. */
  readonly known: boolean;
}

export interface CheckCounts {
  readonly runs: number;
  readonly failed: number;
  /** failed / runs, from 0 to 1; 0 when nothing ran. */
  readonly share: number;
}

/**
 * The questions a person debugging a run asks, answered from the event log alone: what was
 * slow, what kept failing, who stalled or looped, where merges collided, what was retried and
 * why, what crashed, where the money went, how long work took to land and how often main was
 * red. Plain data with stable names: scripts read it as JSON (`colony analyze --json`).
 * Lists are ranked, the most telling first, and capped at a few entries; counts beside them
 * (`runs`, `failingTotal`, `total`, `count`) say how many there were in all.
 */
export interface RunAnalysis {
  /** The run analysed; null when no event of a run was folded. */
  readonly runId: string | null;
  /** Events of the run folded. */
  readonly events: number;
  readonly commands: CommandAnalysis;
  readonly stalls: StallAnalysis;
  readonly loops: LoopAnalysis;
  readonly conflicts: ConflictAnalysis;
  readonly retries: RetryAnalysis;
  /** Tasks whose agent crashed, in the order they crashed; every one of them, not capped. */
  readonly crashes: readonly CrashedTask[];
  readonly cost: CostAnalysis;
  /** Tokens and cost of every model call (compaction summaries included), by the role of the agent that made it. */
  readonly tokensByRole: Readonly<Record<AgentRole, RoleUsage>>;
  readonly timeToLand: LandingTimes;
  readonly mainHealth: MainHealth;
}
