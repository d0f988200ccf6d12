import type { ColonyEvent } from '../events/event-types.js';
import type { ChatModel } from '../model/chat-model.js';
import type { EventStore } from '../store/event-store.js';
import type { TaskStore } from '../store/task-store.js';
import type { Repository } from '../workspace/repository.js';
import type { Wakeups } from './wakeups.js';
import type { WorkInFlight } from './work-in-flight.js';

/** Everything the agents of one run share. Passed down, never found through globals. */
export interface RunContext {
  readonly runId: string;
  readonly repo: Repository;
  readonly events: EventStore;
  readonly tasks: TaskStore;
  readonly wakeups: Wakeups;
  /** Workers' workspaces are made in here. */
  readonly workspacesDir: string;
  /**
   * The run's shared install of the repository's dependencies, linked into each new worker
   * workspace; null or absent when the run has none.
   */
  readonly dependencyLayer?: string | null;
  /** Planners' views of main are made in here. */
  readonly viewsDir: string;
  readonly workerModel: ChatModel;
  readonly plannerModel: ChatModel;
  readonly workerMaxSteps: number;
  /** The `--merge-check` command workers' merges must pass, or null for none. */
  readonly mergeCheck: string | null;
  readonly plannerMaxSteps: number;
  readonly now: () => number;
  /** The files the run's tasks declare and change, for its planners (one per run, shared). */
  readonly workInFlight: WorkInFlight;
  readonly onEvent?: (event: ColonyEvent) => void;
}

/** The key the runner waits on for new tasks. */
export const RUNNER_WAKEUP = 'runner';
