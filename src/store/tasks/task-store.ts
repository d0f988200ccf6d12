import type { Handoff } from '../../events/handoff.js';

/** A worker task is built by one worker; a planner task is a scope owned by a (sub-)planner. */
export type TaskKind = 'worker' | 'planner';

/** `open` waits for a runner, `running` is leased, the rest are closed with that handoff status. */
export type TaskStatus = 'open' | 'running' | Handoff['status'];

export const TASK_STATUSES: readonly TaskStatus[] = ['open', 'running', 'done', 'partial', 'blocked', 'failed'];

export interface NewTask {
  readonly id: string;
  readonly runId: string;
  /** The task of the planner that published this one; null only for the root planner's task. */
  readonly parentTaskId: string | null;
  /** The agent that published it; null for the root planner's task. */
  readonly createdBy: string | null;
  readonly kind: TaskKind;
  readonly title: string;
  /** The brief, in Markdown, exactly as the agent that takes the task will read it. */
  readonly body: string;
  /** For a planner task: the slice of the repository it owns (a path prefix). */
  readonly scope: string | null;
  /** The task this one retries, if any. */
  readonly retryOf: string | null;
  /**
   * The files or folders (a folder ends in `/`) the task expects to change, as its planner
   * declared them; none when left out.
   */
  readonly paths?: readonly string[];
  /**
   * For a worker task: shell commands that must pass on main once its work has landed.
   * colony runs them after the worker ends and before its handoff is delivered; none when left out.
   */
  readonly acceptance?: readonly string[];
}

export interface TaskRecord extends NewTask {
  /** As declared when the task was created, in that order; empty when none were. */
  readonly paths: readonly string[];
  /** As given when the task was created, in that order; empty when none were. */
  readonly acceptance: readonly string[];
  readonly status: TaskStatus;
  /** How many times the task has been claimed. */
  readonly attempt: number;
  /** The runner holding a running task's lease; on a closed task, the runner that closed it. */
  readonly leaseHolder: string | null;
  /** Milliseconds since the epoch; a running task whose lease is past this may be claimed again. */
  readonly leaseExpiresAt: number | null;
  readonly createdAt: number;
  readonly closedAt: number | null;
  readonly handoff: Handoff | null;
}

/** Who left a message that is not a handoff in a planner's inbox. */
export type MessageSender = 'person' | 'colony';

/** What sits in a planner's inbox: a child's handoff, or a message from a person or from colony. */
export interface InboxMessage {
  /** Position among all inbox messages of the store; strictly increasing. */
  readonly seq: number;
  readonly runId: string;
  readonly recipientTaskId: string;
  /** The child task whose handoff this is; null for a message from a person or from colony. */
  readonly fromTaskId: string | null;
  /**
   * Who wrote a message that is not a handoff: a person (`colony say`, the UIs) or colony itself
   * (a fix-up from the green loop); null for a handoff.
   */
  readonly sender: MessageSender | null;
  readonly handoff: Handoff | null;
  readonly text: string | null;
  readonly createdAt: number;
}

/**
 * One change of the user's andon on a whole run (`colony andon`). While the latest change of a
 * run pauses it, no task of that run is claimed, by any runner. It is the user's alone: a
 * planner's andon neither sets nor lifts it.
 */
export interface RunAndonChange {
  /** Position among all run andon changes of the store; strictly increasing. */
  readonly seq: number;
  readonly runId: string;
  /** True when this change holds the run, false when it releases it. */
  readonly paused: boolean;
  readonly reason: string;
  readonly changedAt: number;
}

/**
 * One request a person made of a running run besides messages and the run's andon: a new limit on the
 * workers running at once (`colony workers`), or a stop of the agent on one task (`colony
 * stop`). Rows are only ever added, numbered in commit order, so the process that writes the
 * run's log records each once and acts on it, whichever process made it and whenever.
 */
export type RunRequest = RunRequestCommon &
  (
    | {
        readonly kind: 'workers';
        /** The most workers that may run at once from now on: a positive whole number. */
        readonly workers: number;
      }
    | {
        readonly kind: 'stop';
        /** The task whose agent is to stop; the task then closes with a failure handoff. */
        readonly taskId: string;
      }
    | {
        /** A green snapshot of main now (`colony green --now`). */
        readonly kind: 'green';
      }
  );

interface RunRequestCommon {
  /** Position among all requests of the store; strictly increasing. */
  readonly seq: number;
  readonly runId: string;
  readonly reason: string;
  readonly requestedAt: number;
}

export interface ClaimRequest {
  readonly runId: string;
  /** Who takes the lease: one runner. */
  readonly holder: string;
  readonly kinds: readonly TaskKind[];
  readonly now: number;
  readonly leaseMs: number;
  /**
   * The seq of the run's latest andon change as the claimer's log has it (0: none). Given, the
   * claim hands out nothing unless that is still the run's latest change, read in the claim's
   * transaction: a change made since (from any process) is recorded first, so no claim lands in
   * the log between a hold and its release.
   */
  readonly runAndonSeq?: number;
}

/**
 * Who runs a task, and which attempt: `attempt` is the task's claim count when `holder`
 * took it, so it names one attempt at the task. A write that carries a lease is a fencing
 * token: the store applies it only while the task is still running under that holder at that
 * attempt, so an agent from an older attempt (its lease expired and the task was claimed
 * again, by another runner or the same one) cannot change what the newer one owns.
 */
export interface Lease {
  readonly holder: string;
  readonly attempt: number;
}

export type CreateTaskResult = { readonly ok: true; readonly task: TaskRecord } | { readonly ok: false; readonly error: string };

export type CompleteResult =
  | { readonly ok: true; readonly task: TaskRecord; readonly delivered: InboxMessage | null }
  | { readonly ok: false; readonly error: string };

/**
 * The tasks of a run and who works on them: publishing, claims and leases (fenced by
 * attempt), closing with a handoff, and planners' andons, which pause claims below a task.
 */
export interface TaskQueue {
  /**
   * Publishes a task, open. With `publisher` (the lease of the planner publishing it), the
   * parent must be running under that lease, else nothing is created and the result says which
   * attempt runs the parent now. Root tasks are created without one. Throws when the id is
   * taken, the parent is not a task of the same run, or a root task names a publisher
   * (programmer errors).
   */
  createTask(task: NewTask, now: number, publisher?: Lease): Promise<CreateTaskResult>;
  getTask(id: string): Promise<TaskRecord | null>;
  /** Every task of the run, oldest first. */
  listTasks(runId: string): Promise<TaskRecord[]>;
  /** The tasks published under `parentTaskId` (its direct children), oldest first. */
  listChildren(parentTaskId: string): Promise<TaskRecord[]>;
  claim(request: ClaimRequest): Promise<TaskRecord | null>;
  renewLeases(holder: string, now: number, leaseMs: number): Promise<number>;
  /** Gives the task back, open and without a lease; false (and nothing changed) when `lease` is not current. */
  release(taskId: string, lease: Lease): Promise<boolean>;
  /** Closes the task with `handoff` and delivers it to the parent's inbox; refused unless `lease` is current. */
  complete(taskId: string, lease: Lease, handoff: Handoff, now: number): Promise<CompleteResult>;
  /**
   * Opens every running task of the run, without a lease, and returns them as they are now
   * (their `attempt` unchanged: the next claim counts the new attempt). For resuming a run
   * whose runner is known to be gone (its run lock was free): its leases need not expire first.
   */
  releaseAbandoned(runId: string, now: number): Promise<TaskRecord[]>;
  /** Children of the task that are not closed yet (open or running). */
  openChildren(parentTaskId: string): Promise<number>;
  /**
   * Children that can still hand off without anyone acting: running, or open and not below a
   * paused task. Open children below a pulled andon are not counted: they wait for a person or
   * a planner to release it. The user's hold on the whole run (`setRunHold`) does not make a
   * child unmovable: it is the user's to lift, so its planner waits rather than giving up on it.
   */
  movableChildren(parentTaskId: string): Promise<number>;
  /**
   * Pauses (or resumes) new claims of every task below `taskId`, at any depth; `taskId` itself
   * stays claimable. With a `lease` for `taskId` that is not current, changes nothing and
   * returns false; returns true otherwise. Throws for an unknown task.
   */
  setAndon(taskId: string, paused: boolean, now: number, lease?: Lease): Promise<boolean>;
  /** The tasks of the run whose andon is paused, oldest first. */
  pausedTasks(runId: string): Promise<string[]>;
}

/** Planners' inboxes: handoffs and messages delivered to a task, each taken once. */
export interface TaskInboxes {
  /**
   * Leaves a message in a planner task's inbox, from a person unless `sender` says colony wrote
   * it. Throws when the recipient is not a planner task of the run.
   */
  sendMessage(runId: string, recipientTaskId: string, text: string, now: number, sender?: MessageSender): Promise<InboxMessage>;
  /**
   * The recipient's unread messages in order, marked taken in the same transaction. With a
   * `lease` for the recipient task that is not current, returns none and takes none.
   */
  takeInbox(recipientTaskId: string, lease?: Lease): Promise<InboxMessage[]>;
  /**
   * The messages the recipient has already taken, oldest first: on resume, the ones taken
   * before a crash but never recorded in the conversation can be delivered again.
   */
  takenInbox(recipientTaskId: string): Promise<InboxMessage[]>;
  /** How many unread messages the recipient has. */
  unreadCount(recipientTaskId: string): Promise<number>;
  /** Every handoff delivered to an inbox in this run, read or not, oldest first (for audits). */
  deliveredHandoffs(runId: string): Promise<InboxMessage[]>;
}

/**
 * What people ask of a run, kept for its process to act on: the user's andon, worker limits,
 * stops, green snapshots, and people's messages, each readable from a seq on (what a log has
 * yet to record).
 */
export interface RunControlStore {
  /**
   * Pulls (`paused` true) or releases the user's andon on the whole run: while it is pulled,
   * `claim` hands out no task of the run, of any kind, however its tasks' andons stand; tasks
   * already running keep their leases and can complete. Kept apart from the tasks' andons, so no
   * planner's `setAndon` changes it. Returns the change, or null when nothing changed (releasing
   * a run that is not paused, or pausing one already paused for the same reason).
   */
  setRunAndon(runId: string, paused: boolean, reason: string, now: number): Promise<RunAndonChange | null>;
  /** The change that pauses the run now, or null when the run is not paused. */
  runAndon(runId: string): Promise<RunAndonChange | null>;
  /** The run's andon changes with a seq above `afterSeq`, oldest first (what a log has yet to record). */
  runAndonChanges(runId: string, afterSeq: number): Promise<RunAndonChange[]>;
  /**
   * Asks the run to run at most `workers` workers at once from now on. Kept as a request, not a
   * setting: the run's own process reads it (`runRequests`), records it and acts on it, so it
   * works from any process and reaches a stopped run when it is resumed. Throws when `workers`
   * is not a positive whole number (callers check what people type first).
   */
  requestWorkers(runId: string, workers: number, reason: string, now: number): Promise<RunRequest>;
  /**
   * Asks the run to stop the agent working on `taskId`, which then closes with a failure handoff
   * to its planner. Whether the task can still be stopped is the caller's to check; the store
   * keeps the request. Throws when the task is not a task of the run (a programmer error).
   */
  requestStop(runId: string, taskId: string, reason: string, now: number): Promise<RunRequest>;
  /** Asks the run for a green snapshot of main as soon as the one going, if any, is over. */
  requestGreen(runId: string, reason: string, now: number): Promise<RunRequest>;
  /** The run's requests with a seq above `afterSeq`, oldest first (what a log has yet to record). */
  runRequests(runId: string, afterSeq: number): Promise<RunRequest[]>;
  /**
   * The run's messages from people (`sendMessage`; not handoffs, not colony's own), to any of its planners, with a
   * seq above `afterSeq`, oldest first, taken or not.
   */
  personMessages(runId: string, afterSeq: number): Promise<InboxMessage[]>;
}

/**
 * The task table and the planners' inboxes: how agents coordinate without talking to each other.
 * Three facets, `TaskQueue`, `TaskInboxes` and `RunControlStore`, so a second implementation or a
 * client that only steers can depend on the part it uses.
 *
 * Contract, held by every implementation through one conformance suite (in parts: the main one,
 * fencing, andons, steering):
 * - `claim` is atomic: of any number of concurrent claimers (in this process or others on the
 *   same store), exactly one gets a given task. It takes the oldest claimable task (in creation
 *   order) of the given kinds in the run: open, or running with a lease that expired before
 *   `now`; never one with a paused ancestor (andon), and none at all while the run's andon is pulled
 *   (`setRunHold`). A task whose own andon is paused stays
 *   claimable, so a planner that paused its subtree can still be re-claimed after its runner
 *   died; only the tasks below it wait. `claim` sets the lease and increments `attempt`.
 * - A lease stays held until another claim takes the task: a holder whose lease expired can
 *   still renew, release or complete the task as long as nobody re-claimed it.
 * - Writes made on a task's behalf are fenced by its `Lease` (holder and attempt): `complete`,
 *   `release`, a `createTask` with a `publisher`, and a `takeInbox` or `setAndon` given a lease
 *   change nothing unless the task is running under that holder at that attempt. A re-claim,
 *   even by the same holder, makes every earlier attempt's writes stale.
 * - `renewLeases` extends every lease `holder` holds on running tasks to at least
 *   `now + leaseMs` (never shortens one) and returns how many it holds.
 * - `release` gives a running task back (open, no lease) when the lease is current.
 * - `complete` closes a running task whose lease is current with its handoff and, in the same
 *   transaction, puts the handoff in the parent task's inbox: delivered exactly once. It fails
 *   (and changes nothing) otherwise.
 * - `takeInbox` returns the recipient's unread messages in order and marks them read, in one
 *   transaction: each message is taken once.
 * - `releaseAbandoned` is for resuming a run whose runner is known to be dead: it opens every
 *   running task of the run at once, without waiting for the leases to expire.
 */
export interface TaskStore extends TaskQueue, TaskInboxes, RunControlStore {
  close(): Promise<void>;
}
