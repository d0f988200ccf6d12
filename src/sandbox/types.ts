import type { RunProcess } from './process/types.js';

/**
 * How commands are confined. `bubblewrap` is the real sandbox; `unshare` a weaker fallback
 * for machines without bubblewrap (root only, no read-only view of the file system), used
 * only when the user asks for it; `none` runs commands as the harness, unconfined.
 */
export type SandboxMethod = 'bubblewrap' | 'unshare' | 'none';

/** What a caller adds to an agent's confinement beyond its workspace. */
export interface ConfinementExtras {
  /** Host paths shown inside, at `target`; writable or read-only. */
  readonly binds: readonly { readonly source: string; readonly target: string; readonly writable: boolean }[];
  /** Bash run inside the confinement before each command (e.g. a bridge to a network); '' for none. */
  readonly prelude: string;
  /** Variables every command gets, on top of the cleared environment; a request's own win over these. */
  readonly environment: Readonly<Record<string, string>>;
}

/** One agent's confinement. */
export interface AgentConfinement {
  /** Names the agent's uid (one per agent id) and its cgroups. */
  readonly agentId: string;
  /** The only host directory the agent's commands may write; every command's cwd must be inside it. */
  readonly workspace: string;
  /** Host paths the commands must not see (the harness's state, other agents' workspaces). */
  readonly hidden: readonly string[];
  /** The host directory for this agent's spill files; created here. Commands see it read-only at /tmp/colony-output. */
  readonly spillDir: string;
  readonly extras?: ConfinementExtras;
  /** Whether commands reach the network; off by default they see only their own loopback. */
  readonly shareNetwork: boolean;
}

export interface Sandbox {
  readonly method: SandboxMethod;
  /** One line for an event or a log: how commands are confined, as who, with which limits. */
  readonly summary: string;
  /**
   * The gid commands run with when they run under uids other than the harness's own (the harness
   * is root), or null when they run as the harness's uid. Whatever the harness makes for commands
   * to write must be writable by this group.
   */
  readonly sharedGroup: number | null;
  /**
   * Whether agents running as other uids reach what they need through directories they may not
   * enter themselves (a home at 0700, a `mktemp -d` above the repository): root covers each such
   * directory in the command's own mount namespace with an empty one that lists nothing, and
   * shows only what the command needs in it again, at the same paths. False when commands run as
   * the harness's uid, or root cannot make a mount namespace here; then every directory on the
   * way must let the agents' uids through.
   */
  readonly coversPrivateDirectories: boolean;
  /** A RunProcess for one agent; calling it again for the same agent id gives the same uid. */
  runnerFor(confinement: AgentConfinement): RunProcess;
  /** Removes the run's cgroups (killing anything still in them). */
  close(): Promise<void>;
}
