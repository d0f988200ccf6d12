import type { RecordedEvent } from '../../events/event-types.js';
import type { ChatModel } from '../../model/chat-model.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import type { Repository } from '../../workspace/git/repository.js';
import type { WorkspaceProvider } from '../../workspace/workspace-provider.js';
import type { BudgetLedger } from '../budget/budget-ledger.js';
import type { CommandRunners } from '../setup/command-sandbox.js';
import type { DiskGuard } from '../disk-guard.js';
import type { PromptSet } from '../prompts/prompt-set.js';
import type { SteeringWriter } from '../steering/steering-record.js';
import type { Wakeups } from '../wakeups.js';
import type { WorkInFlight } from '../in-flight/work-in-flight.js';
import type { WorkspaceQuota } from '../setup/workspace-quota.js';
import type { ReleaseVerdict } from '../green/types.js';
import type { MainHealth } from '../green/main-health.js';
import type { RunSettings } from '../../events/run-settings.js';
import type { DependencyLayers } from '../setup/dependency-layers.js';
import type { ConflictSettler } from '../../workspace/git/rebase-state.js';

/** The release check a root planner's done `finish` waits for (the green loop's, see green-loop.ts). */
export interface ReleaseGate {
  release(): Promise<ReleaseVerdict>;
}

/** Everything the agents of one run share. Passed down, never found through globals. */
export interface RunContext {
  readonly runId: string;
  readonly repo: Repository;
  readonly events: EventStore;
  readonly tasks: TaskStore;
  readonly wakeups: Wakeups;
  /** Makes and removes workers' workspaces. */
  readonly workspaces: WorkspaceProvider;
  /** Holds new workers back while their workspaces would take more disk than allowed; absent for no cap. */
  readonly workspaceQuota?: WorkspaceQuota | undefined;
  /** Workers' workspaces are made in here. */
  readonly workspacesDir: string;
  /**
   * The shared installs of the repository's dependencies, one per set of inputs: each new
   * workspace, planner's view and check gets the one of the commit it starts from. Absent when
   * the run has none.
   */
  readonly dependencyLayers?: DependencyLayers | undefined;
  /** How workers' merges settle a package.json and lockfile changed on both sides; absent to leave such conflicts to the agent. */
  readonly settleConflicts?: ConflictSettler | undefined;
  /** Directories shown at every worker's workspace root, shared and never written. */
  readonly sharedLayers?: readonly string[] | undefined;
  /** Planners' views of main are made in here. */
  readonly viewsDir: string;
  /** What the run was told, defaults filled in (see `runSettingsSchema`): steps, the merge check, freshness, the hang limit. */
  readonly settings: RunSettings;
  readonly workerModel: ChatModel;
  readonly plannerModel: ChatModel;
  /** The run's prompts, read once at its start: colony's own, with the repository's overrides (see `loadPromptSet`). */
  readonly prompts: PromptSet;
  /** Runs agents' commands, confined as the user chose (`--sandbox`). */
  readonly commands: CommandRunners;
  readonly now: () => number;
  /** The files the run's tasks declare and change, for its planners (one per run, shared). */
  readonly workInFlight: WorkInFlight;
  /** How main stands by the green loop's last snapshot, for its workers; absent: they are told nothing of it. */
  readonly mainHealth?: MainHealth | undefined;
  /** The run's limits and spend; the run has no limit when absent. It must be told every event (see `onEvent`). */
  readonly budget?: BudgetLedger | undefined;
  readonly onEvent?: ((event: RecordedEvent) => void) | undefined;
  /** Waits out a full disk instead of failing; writes go straight to the stores when absent. */
  readonly disk?: DiskGuard | undefined;
  /** How long each of a task's acceptance commands may run; ten minutes when absent. */
  readonly acceptanceTimeoutMs?: number | undefined;
  /**
   * On resume: the agent an earlier session of the run started on each task (task id →
   * agent id). A task claimed again goes back to that agent, its conversation rebuilt.
   */
  readonly priorAgents?: ReadonlyMap<string, string> | undefined;
  /**
   * Records in the log what people did through the task store (messages left, the user's andon
   * pulled or released), from any process. The runner calls it before it claims, a planner before it
   * takes its inbox, so the record comes before what it allowed. Absent: nothing steers the run.
   */
  readonly steering?: SteeringWriter | undefined;
  /** The green loop's release check: a root planner's done `finish` is refused while it fails. Absent: no gate (`colony work`, tests of the tree alone). */
  readonly green?: ReleaseGate | undefined;
}

/** The abort reason of agents stopped because the run stops (Ctrl-C, the root closed): their tasks go back to the store. */
export const RUN_STOPPED = 'the run was stopped';

