import type { ColonyEvent } from '../../events/event-types.js';
import { createAgentActivityFold, type AgentActivity } from './agent-activity.js';
import { describeEvent } from './format-event.js';
import { createRunErrorsFold, type RunErrors } from './run-errors.js';
import { createRunStatusFold } from '../status/run-status-fold.js';
import type { AgentStatus, RunStatus } from '../status/types.js';
import { createTaskBoardFold, type HandoffEntry, type TaskEntry } from './task-board.js';
import { createThroughputFold, type ThroughputPoint } from './throughput.js';

/** An agent of the tree with the call it is making now. */
export interface AgentView extends AgentStatus {
  readonly activity: AgentActivity | null;
}

/** One event of the live tail, as a person reads it. */
export interface TailLine {
  readonly seq: number;
  readonly ts: number;
  readonly agentId: string;
  readonly type: ColonyEvent['type'];
  readonly text: string;
}

/**
 * Everything a UI shows of a run, folded from the event log alone, so a live run, a finished
 * one and a replay at any moment read the same. Plain data.
 */
export interface RunView {
  /** As `colony status` reports it; tasks and handoffs counted from the log. */
  readonly status: RunStatus;
  readonly agents: readonly AgentView[];
  readonly tasks: readonly TaskEntry[];
  /** One point a minute, the last `throughputPoints` minutes up to now, oldest first. */
  readonly throughput: readonly ThroughputPoint[];
  readonly errors: RunErrors;
  readonly handoffs: readonly HandoffEntry[];
  /** The latest events, oldest first. */
  readonly tail: readonly TailLine[];
  /** The last event folded. */
  readonly lastSeq: number;
}

export interface RunViewOptions {
  /** Fold only this run; without it, the run started last. */
  readonly runId?: string;
  readonly tailSize?: number;
  readonly throughputPoints?: number;
}

/** The run view built up one event at a time; a UI feeds what it reads and takes a snapshot per frame. */
export interface RunViewFold {
  add(event: ColonyEvent): void;
  readonly runId: string | null;
  readonly lastSeq: number;
  /** The view at `now` (a live run's clock, or a replay's); null until the run started. */
  snapshot(now: number): RunView | null;
}

export function createRunViewFold(options: RunViewOptions = {}): RunViewFold {
  const tailSize = options.tailSize ?? 200;
  const throughputPoints = options.throughputPoints ?? 60;
  const status = createRunStatusFold(options.runId === undefined ? {} : { runId: options.runId });
  let activity = createAgentActivityFold();
  let throughput = createThroughputFold();
  let errors = createRunErrorsFold();
  let board = createTaskBoardFold();
  let tail: TailLine[] = [];
  let lastSeq = 0;
  let foldedRun: string | null = null;

  return {
    add(event) {
      if (event.seq <= lastSeq) return;
      lastSeq = event.seq;
      status.add(event);
      const runId = status.runId;
      if (runId === null || event.runId !== runId) return;
      if (runId !== foldedRun) {
        // The status fold moved on to a newer run: everything else starts over with it.
        foldedRun = runId;
        activity = createAgentActivityFold();
        throughput = createThroughputFold();
        errors = createRunErrorsFold();
        board = createTaskBoardFold();
        tail = [];
      }
      activity.add(event);
      throughput.add(event);
      errors.add(event);
      board.add(event);
      if (event.type !== 'model.requested') {
        tail.push({ seq: event.seq, ts: event.ts, agentId: event.agentId, type: event.type, text: describeEvent(event) });
        if (tail.length > tailSize * 2) tail = tail.slice(-tailSize);
      }
    },
    get runId() {
      return status.runId;
    },
    get lastSeq() {
      return lastSeq;
    },
    snapshot(now) {
      const tasks = board.snapshot();
      const folded = status.snapshot({ tasks: [], deliveredHandoffs: [], now });
      if (folded === null) return null;
      const view: RunStatus = { ...folded, tasks: tasks.counts, handoffs: { delivered: tasks.delivered } };
      return {
        status: view,
        agents: view.agents.map((agent) => ({ ...agent, activity: agent.endedAt === null ? activity.of(agent.id) : null })),
        tasks: tasks.tasks,
        throughput: throughput.series(folded.run.endedAt ?? now, throughputPoints),
        errors: errors.snapshot(),
        handoffs: tasks.handoffs,
        tail: tail.slice(-tailSize),
        lastSeq,
      };
    },
  };
}
