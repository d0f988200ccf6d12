import type { AgentTranscript } from '../../observe/replay/agent-transcript.js';
import type { RunView } from '../../observe/view/run-view.js';

/**
 * Where the terminal UI gets the run from: a live log it follows, or a recorded one it plays
 * back. The UI calls `tick` once per frame and, once it has settled, draws `view()`; nothing
 * else moves the view. Everything that reads the log returns a promise; what the UI draws from
 * (`describe`, `view`, `now`, `replay`) reads none, so drawing never waits on the store.
 */
export interface TuiSource {
  /** Said in the header: `live`, `finished`, `reading the log…`, `replay 4x paused`. */
  describe(): string;
  /** One frame's work: read what the log gained (a bounded part, none while `readMore` is behind), or move the replay's clock. */
  tick(): Promise<void>;
  /**
   * Reads on, between frames, into what the log holds beyond what the frames read: a bounded
   * part per call, so a key or a frame never waits long behind it. Resolves to whether more is
   * waiting; false once caught up, and always for a replay. The next frame shows what it read.
   */
  readMore(): Promise<boolean>;
  view(): RunView | null;
  /** The moment the view shows: the clock for a live run, the replay's clock for a replay. */
  now(): number;
  transcript(agentId: string): Promise<AgentTranscript>;
  /** The agent's changes: its workspace's uncommitted diff and the commits it landed. */
  diff(transcript: AgentTranscript): Promise<string>;
  /** Present for a replay. */
  readonly replay: ReplayControls | null;
}

export interface ReplayControls {
  readonly playing: boolean;
  readonly speed: number;
  toggle(): void;
  /** Pauses, and shows the next event (in the frame after it was read). */
  step(): Promise<void>;
  faster(): void;
  slower(): void;
}

/** What a steering key did, to show in the footer. */
export interface SteeringOutcome {
  readonly ok: boolean;
  readonly message: string;
}

/**
 * What the keys that steer a live run do; null when there is nothing to steer (a replay, a
 * finished run). Each is what `colony andon`, `colony say`, `colony stop` and `colony workers` do.
 * Each resolves to its outcome, a refusal or a failure to record the change included.
 */
export interface TuiActions {
  /** Pulls the user's andon on the run, or releases it when it is pulled (as the store says now, not as the screen last showed). */
  toggleAndon(reason: string): Promise<SteeringOutcome>;
  /** `target` null: the root planner. */
  say(target: string | null, text: string): Promise<SteeringOutcome>;
  stop(target: string, reason: string): Promise<SteeringOutcome>;
  setWorkers(workers: number): Promise<SteeringOutcome>;
  /** One more or one fewer worker than the limit as the store has it now, so quick presses add up. */
  changeWorkers(delta: number): Promise<SteeringOutcome>;
}
