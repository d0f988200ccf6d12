import { posix } from 'node:path';
import type { ColonyEvent, EventType } from '../../events/event-types.js';
import { normalizeRepoPath } from './path-overlap.js';

/** The events the fold reads; the rest change nothing in it. */
export const WORK_IN_FLIGHT_EVENT_TYPES: readonly EventType[] = [
  'task.created',
  'task.claimed',
  'task.released',
  'handoff.delivered',
  'agent.started',
  'agent.ended',
  'workspace.created',
  'tool.started',
  'tool.ended',
  'merge.landed',
  'merge.conflicted',
];

/** Merge outcomes (landings and conflicts) the hot files are counted over: the run's recent past. */
export const HOT_FILES_WINDOW = 50;

/** The file tools whose `path` argument is a file the worker changed. */
const FILE_CHANGING_TOOLS: ReadonlySet<string> = new Set(['write_file', 'edit_file']);

/** A task that is not closed yet: open (waiting for a runner) or running. */
export interface TaskInFlight {
  readonly taskId: string;
  readonly kind: 'worker' | 'planner';
  readonly title: string;
  readonly parentTaskId: string | null;
  readonly state: 'open' | 'running';
  /** A worker task's declared paths; a delegated scope for a planner task. Normalised. */
  readonly declared: readonly string[];
  /** Files its workers changed so far (written, edited, landed, conflicted), first touch first. */
  readonly touched: readonly string[];
  /** The seq of the latest event that changed this task. */
  readonly lastActivitySeq: number;
}

/** A file that merges kept meeting in the recent window. */
export interface HotFile {
  readonly path: string;
  /** Landings on main that changed it. */
  readonly landed: number;
  /** Of those landings, the ones where colony settled concurrent appends to it. */
  readonly settled: number;
  /** Conflicts in it handed back to a worker. */
  readonly conflicted: number;
}

/**
 * Which files the tasks of one run declare and touch, and which files its merges keep
 * meeting in, folded one event at a time from the event log.
 */
export interface WorkInFlightFold {
  /** Events of other runs, and events at or below a seq already folded, change nothing. */
  add(event: ColonyEvent): void;
  /** The highest seq folded so far, 0 before any. */
  readonly lastSeq: number;
  /** Every task of the run that is not closed, in creation order. */
  inFlight(): TaskInFlight[];
  /** The task that published `taskId`; null for the root, undefined when the fold never saw it. */
  parentOf(taskId: string): string | null | undefined;
  /**
   * Files with at least one conflict or settled append, or two landings, in the last
   * HOT_FILES_WINDOW merge outcomes: the most conflicted first, then the most landed.
   */
  hotFiles(): HotFile[];
}

interface TaskEntry {
  readonly taskId: string;
  readonly kind: 'worker' | 'planner';
  readonly title: string;
  readonly parentTaskId: string | null;
  state: 'open' | 'running';
  readonly declared: readonly string[];
  readonly touched: Set<string>;
  lastActivitySeq: number;
}

interface MergeOutcome {
  readonly landed: readonly string[];
  readonly settled: readonly string[];
  readonly conflicted: readonly string[];
}

interface Counts {
  landed: number;
  settled: number;
  conflicted: number;
}

export function createWorkInFlightFold(runId: string): WorkInFlightFold {
  let lastSeq = 0;
  const tasks = new Map<string, TaskEntry>();
  const parents = new Map<string, string | null>();
  const taskOfAgent = new Map<string, string>();
  const workspaceOfAgent = new Map<string, string>();
  /** Started file-changing calls per agent, by call id: the path they change, once they succeed. */
  const pendingWrites = new Map<string, Map<string, string>>();
  const window: MergeOutcome[] = [];
  const counts = new Map<string, Counts>();

  const touch = (agentId: string, paths: readonly string[], seq: number): void => {
    const task = tasks.get(taskOfAgent.get(agentId) ?? '');
    if (task === undefined) return;
    for (const path of paths) {
      const normalized = normalizeRepoPath(path);
      if (normalized !== null) task.touched.add(normalized);
    }
    task.lastActivitySeq = seq;
  };

  const count = (outcome: MergeOutcome, change: 1 | -1): void => {
    const apply = (paths: readonly string[], field: keyof Counts): void => {
      for (const path of new Set(paths)) {
        const entry = counts.get(path) ?? { landed: 0, settled: 0, conflicted: 0 };
        entry[field] += change;
        if (entry.landed === 0 && entry.settled === 0 && entry.conflicted === 0) counts.delete(path);
        else counts.set(path, entry);
      }
    };
    apply(outcome.landed, 'landed');
    apply(outcome.settled, 'settled');
    apply(outcome.conflicted, 'conflicted');
  };

  const remember = (outcome: MergeOutcome): void => {
    window.push(outcome);
    count(outcome, 1);
    const evicted = window.length > HOT_FILES_WINDOW ? window.shift() : undefined;
    if (evicted !== undefined) count(evicted, -1);
  };

  const forgetAgent = (agentId: string): void => {
    taskOfAgent.delete(agentId);
    workspaceOfAgent.delete(agentId);
    pendingWrites.delete(agentId);
  };

  return {
    get lastSeq() {
      return lastSeq;
    },
    add(event) {
      if (event.seq <= lastSeq) return;
      lastSeq = event.seq;
      if (event.runId !== runId) return;
      switch (event.type) {
        case 'task.created': {
          const { data } = event;
          parents.set(data.taskId, data.parentTaskId);
          const declared = data.kind === 'planner' ? (data.scope === null ? [] : [data.scope]) : (data.paths ?? []);
          tasks.set(data.taskId, {
            taskId: data.taskId,
            kind: data.kind,
            title: data.title,
            parentTaskId: data.parentTaskId,
            state: 'open',
            declared: declared.flatMap((path) => normalizeRepoPath(path) ?? []),
            touched: new Set(),
            lastActivitySeq: event.seq,
          });
          return;
        }
        case 'task.claimed':
        case 'task.released': {
          const task = tasks.get(event.data.taskId);
          if (task === undefined) return;
          task.state = event.type === 'task.claimed' ? 'running' : 'open';
          task.lastActivitySeq = event.seq;
          return;
        }
        case 'handoff.delivered':
          tasks.delete(event.data.taskId);
          return;
        case 'agent.started':
          if (event.data.role === 'worker') taskOfAgent.set(event.agentId, event.data.taskId);
          return;
        case 'agent.ended':
          forgetAgent(event.agentId);
          return;
        case 'workspace.created':
          workspaceOfAgent.set(event.agentId, event.data.path);
          return;
        case 'tool.started': {
          if (!FILE_CHANGING_TOOLS.has(event.data.name) || !taskOfAgent.has(event.agentId)) return;
          const path = writtenPath(event.data.input, workspaceOfAgent.get(event.agentId));
          if (path === null) return;
          const pending = pendingWrites.get(event.agentId) ?? new Map<string, string>();
          pending.set(event.data.callId, path);
          pendingWrites.set(event.agentId, pending);
          return;
        }
        case 'tool.ended': {
          const pending = pendingWrites.get(event.agentId);
          const path = pending?.get(event.data.callId);
          if (pending === undefined || path === undefined) return;
          pending.delete(event.data.callId);
          // A refused write or edit changed nothing.
          if (event.data.ok) touch(event.agentId, [path], event.seq);
          return;
        }
        case 'merge.landed':
          touch(event.agentId, event.data.files, event.seq);
          remember({ landed: event.data.files, settled: event.data.autoResolved ?? [], conflicted: [] });
          return;
        case 'merge.conflicted':
          touch(event.agentId, event.data.files, event.seq);
          remember({ landed: [], settled: [], conflicted: event.data.files });
          return;
        default:
          return;
      }
    },
    inFlight() {
      return [...tasks.values()].map((task) => ({ ...task, touched: [...task.touched] }));
    },
    parentOf(taskId) {
      return parents.get(taskId);
    },
    hotFiles() {
      return [...counts]
        .map(([path, entry]) => ({ path, ...entry }))
        .filter((file) => file.conflicted + file.settled >= 1 || file.landed >= 2)
        .sort((a, b) => b.conflicted - a.conflicted || b.landed - a.landed || b.settled - a.settled || a.path.localeCompare(b.path));
    },
  };
}

/**
 * The file a write_file or edit_file call names, relative to the workspace; null when the
 * arguments are not JSON with a `path`, or the path leads outside the workspace (the tool
 * refuses those, so they change nothing).
 */
function writtenPath(input: string, workspace: string | undefined): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || !('path' in parsed) || typeof parsed.path !== 'string') return null;
  let path = parsed.path.replace(/\\/g, '/');
  if (posix.isAbsolute(path)) {
    if (workspace === undefined) return null;
    const relative = posix.relative(workspace, path);
    if (relative === '' || relative === '..' || relative.startsWith('../') || posix.isAbsolute(relative)) return null;
    path = relative;
  }
  return normalizeRepoPath(path);
}
