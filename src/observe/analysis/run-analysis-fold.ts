import type { ColonyEvent } from '../../events/event-types.js';
import { createAgentSilences, type AgentSilences } from './agent-silences.js';
import { createCommandStats, type CommandStats } from './command-stats.js';
import { createMainHealthFold, type MainHealthFold } from './main-health.js';
import type { ConflictAnalysis, ConflictFile, RunAnalysis } from './types.js';
import { TaskLedger } from './task-ledger.js';
import { costOf, crashesOf, landingTimesOf, retriesOf, tokensByRoleOf } from './task-report.js';

const CONFLICT_FILES_LISTED = 10;

export interface RunAnalysisFoldOptions {
  /** Fold only this run. Without it the fold follows the run started last, starting over at each `run.started`. */
  readonly runId?: string;
}

/**
 * The run analysis built up one event at a time, so a caller can feed a log of millions of
 * events page by page: the fold keeps figures per agent, per task and per command text, never
 * the events themselves.
 */
export interface RunAnalysisFold {
  /** Events of other runs, and events at or below a seq already folded, change nothing. */
  add(event: ColonyEvent): void;
  /** The analysis now, as fresh plain data; it can be asked for again after more events. */
  result(): RunAnalysis;
}

interface RunState {
  events: number;
  lastEventAt: number;
  readonly ledger: TaskLedger;
  readonly commands: CommandStats;
  readonly activity: AgentSilences;
  readonly health: MainHealthFold;
  readonly conflicted: Map<string, number>;
  readonly autoResolved: Map<string, number>;
  conflictedMerges: number;
  autoResolvedMerges: number;
}

function freshState(): RunState {
  return {
    events: 0,
    lastEventAt: 0,
    ledger: new TaskLedger(),
    commands: createCommandStats(),
    activity: createAgentSilences(),
    health: createMainHealthFold(),
    conflicted: new Map(),
    autoResolved: new Map(),
    conflictedMerges: 0,
    autoResolvedMerges: 0,
  };
}

export function createRunAnalysisFold(options: RunAnalysisFoldOptions = {}): RunAnalysisFold {
  const followsLatest = options.runId === undefined;
  let runId: string | null = options.runId ?? null;
  let state = freshState();
  let lastSeq = 0;

  function add(event: ColonyEvent): void {
    if (event.seq <= lastSeq) return;
    lastSeq = event.seq;
    if (event.type === 'run.started' && followsLatest && event.runId !== runId) {
      runId = event.runId;
      state = freshState();
    }
    if (event.runId !== runId) return;
    state.events += 1;
    state.lastEventAt = Math.max(state.lastEventAt, event.ts);
    const { ledger } = state;
    // The agent's identity first, so its own `agent.started` already names its task.
    if (event.type === 'agent.started') ledger.agentStarted(event);
    if (event.agentId !== 'system') state.activity.agentEvent(event, ledger.agents.get(event.agentId));
    // Main's health takes every event: the green loop's red time runs on the run's clock.
    state.health.add(event);
    foldEvent(state, event);
  }

  function result(): RunAnalysis {
    const { ledger, activity } = state;
    return {
      runId,
      events: state.events,
      commands: state.commands.result(),
      stalls: activity.stalls(state.lastEventAt, ledger.agents),
      loops: activity.loops(ledger.agents),
      conflicts: conflictsOf(state),
      retries: retriesOf(ledger),
      crashes: crashesOf(ledger),
      cost: costOf(ledger),
      tokensByRole: tokensByRoleOf(ledger),
      timeToLand: landingTimesOf(ledger),
      mainHealth: state.health.result(),
    };
  }

  return { add, result };
}

/** What each event adds to the analysis. Exhaustive, so a new event type is a decision here. */
function foldEvent(state: RunState, event: ColonyEvent): void {
  const { ledger } = state;
  switch (event.type) {
    case 'task.created':
      ledger.taskCreated(event);
      return;
    case 'task.claimed':
      ledger.taskClaimed(event);
      return;
    case 'task.released':
      ledger.taskReleased(event);
      return;
    case 'model.responded':
    case 'context.compacted':
      ledger.spent(event.agentId, event.data.usage, event.data.costUsd);
      return;
    case 'tool.started':
      state.commands.toolStarted(event);
      return;
    case 'tool.ended':
      state.commands.toolEnded(event, ledger.agents.get(event.agentId)?.taskId ?? null);
      return;
    case 'merge.landed': {
      ledger.landed(event);
      const resolved = event.data.autoResolved ?? [];
      if (resolved.length > 0) state.autoResolvedMerges += 1;
      for (const file of resolved) state.autoResolved.set(file, (state.autoResolved.get(file) ?? 0) + 1);
      return;
    }
    case 'merge.conflicted':
      state.conflictedMerges += 1;
      for (const file of event.data.files) state.conflicted.set(file, (state.conflicted.get(file) ?? 0) + 1);
      return;
    case 'handoff.submitted':
      ledger.handoffSubmitted(event);
      return;
    case 'handoff.delivered':
      ledger.handoffDelivered(event);
      return;
    case 'agent.failed':
      ledger.agentFailed(event);
      return;
    case 'agent.hung':
      ledger.agentHung(event);
      state.activity.hung(event);
      return;
    case 'run.resumed':
      state.activity.resumed();
      return;
    case 'main.checked':
    case 'merge.checked':
    case 'acceptance.checked':
    case 'green.checked':
    case 'green.advanced':
    case 'green.blocked':
    case 'green.bisected':
    case 'green.reported':
      // Main's health, folded with every event in add().
      return;
    case 'agent.started':
    case 'run.started':
    case 'run.ended':
    case 'run.configured':
    case 'prompts.loaded':
    case 'trunk.rewritten':
    case 'disk.full':
    case 'disk.recovered':
    case 'agent.ended':
    case 'agent.nudged':
    case 'agent.parked':
    case 'agent.unparked':
    case 'agent.restored':
    case 'agent.waiting':
    case 'context.shrunk':
    case 'context.compaction-failed':
    case 'model.requested':
    case 'model.retried':
    case 'model.failed':
    case 'provider.limited':
    case 'provider.circuit-opened':
    case 'provider.circuit-closed':
    case 'workspace.created':
    case 'workspace.reopened':
    case 'workspace.removed':
    case 'workspace.method-chosen':
    case 'workspace.salvaged':
    case 'workspace.swept':
    case 'workspace.quota-reached':
    case 'dependencies.installing':
    case 'dependencies.prepared':
    case 'dependencies.failed':
    case 'dependencies.skipped':
    case 'dependencies.linked':
    case 'dependencies.collected':
    case 'sandbox.opened':
    case 'network.requested':
    case 'merge.attempted':
    case 'merge.intended':
    case 'acceptance.started':
    case 'message.received':
    case 'message.sent':
    case 'scratchpad.written':
    case 'andon.changed':
    case 'goal.changed':
    case 'budget.set':
    case 'budget.allotted':
    case 'budget.warned':
    case 'budget.exhausted':
    case 'planner.finished':
    case 'workers.changed':
    case 'agent.stop-requested':
    case 'green.requested':
    case 'host.joined':
    case 'host.left':
    case 'trunk.unfollowed':
      return;
    default:
      assertNever(event);
  }
}

function conflictsOf(state: RunState): ConflictAnalysis {
  const files = new Map<string, ConflictFile>();
  for (const [file, conflicted] of state.conflicted) files.set(file, { file, conflicted, autoResolved: 0 });
  for (const [file, autoResolved] of state.autoResolved) files.set(file, { file, conflicted: files.get(file)?.conflicted ?? 0, autoResolved });
  const ranked = [...files.values()].sort(
    (a, b) => b.conflicted + b.autoResolved - (a.conflicted + a.autoResolved) || b.conflicted - a.conflicted || a.file.localeCompare(b.file),
  );
  return { conflictedMerges: state.conflictedMerges, autoResolvedMerges: state.autoResolvedMerges, files: ranked.slice(0, CONFLICT_FILES_LISTED) };
}

function assertNever(value: never): never {
  throw new Error(`unhandled event: ${JSON.stringify(value)}`);
}
