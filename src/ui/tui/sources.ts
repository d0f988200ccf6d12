import type { AgentTranscript } from '../../observe/replay/agent-transcript.js';
import type { ReplayRun } from '../../observe/replay/replay-run.js';
import type { FollowedRun } from '../../observe/replay/run-reader.js';
import type { RunView } from '../../observe/view/run-view.js';
import { count } from '../../observe/text-table.js';
import type { ReplayControls, TuiSource } from './tui-source.js';

/** Reads an agent's changes for its diff page (the workspace's diff, the commits it landed). */
export type DiffReader = (transcript: AgentTranscript) => Promise<string>;

/**
 * How many events one read folds, in a frame or between frames: a few milliseconds of work, so
 * a key or a frame never waits long behind the reading of a long log. A live run adds a few
 * hundred events between frames; a log opened late is read in many such parts, one a turn.
 */
const EVENTS_PER_READ = 1_000;

/**
 * A live run followed through its log. `describe` says whether it is still being read (a long
 * log is read between frames, a part at a time), live, or ended.
 */
export function liveSource(run: FollowedRun, diff: DiffReader, clock: () => number = Date.now): TuiSource {
  let view: RunView | null = null;
  let read = 0;
  // True while reads between frames carry a log that is behind: a frame then only shows how
  // far they got. A read between frames that fails leaves it false, so the next frame reads.
  let readingBetween = false;
  const tick = async (): Promise<void> => {
    if (!readingBetween) {
      read += await run.catchUp(EVENTS_PER_READ);
      readingBetween = !run.caughtUp;
    }
    view = run.view(clock());
  };
  return {
    describe: () => {
      if (!run.caughtUp) return `reading the log… ${count(read)} events`;
      const state = view?.status.run.state ?? 'running';
      return state === 'running' ? 'live' : `ended ${state}`;
    },
    tick,
    readMore: async () => {
      // Caught up as of the last read: what the log gained since is the next frame's to read.
      readingBetween = false;
      if (run.caughtUp) return false;
      read += await run.catchUp(EVENTS_PER_READ);
      readingBetween = !run.caughtUp;
      return readingBetween;
    },
    view: () => view,
    now: () => (view?.status.run.endedAt ?? clock()),
    transcript: (agentId) => run.transcript(agentId),
    diff,
    replay: null,
  };
}

export interface ReplayOptions {
  /** How many times faster than it happened; 1 is real time. */
  readonly speed: number;
  /** Start paused. */
  readonly paused: boolean;
  readonly clock?: () => number;
}

/** The most events one frame of a replay folds. */
const REPLAY_EVENTS_PER_FRAME = 5_000;

const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/** A recorded run played back: its clock moves with the wall clock times the speed while it plays. */
export function replaySource(replay: ReplayRun, diff: DiffReader, options: ReplayOptions): TuiSource {
  const clock = options.clock ?? Date.now;
  let playing = !options.paused;
  let speed = options.speed;
  let last = clock();
  const controls: ReplayControls = {
    get playing() {
      return playing;
    },
    get speed() {
      return speed;
    },
    toggle: () => {
      playing = !playing;
      last = clock();
    },
    step: async () => {
      playing = false;
      await replay.step();
    },
    faster: () => {
      speed = SPEEDS.find((candidate) => candidate > speed) ?? speed;
    },
    slower: () => {
      speed = [...SPEEDS].reverse().find((candidate) => candidate < speed) ?? speed;
    },
  };
  return {
    describe: () => {
      const at = `${new Date(replay.clock).toISOString().slice(11, 19)} (${Math.round(((replay.clock - replay.startsAt) / Math.max(1, replay.endsAt - replay.startsAt)) * 100)}%)`;
      const state = replay.finished ? 'at the end' : playing ? 'playing' : 'paused';
      return `replay ${speed}x ${state} at ${at}`;
    },
    tick: async () => {
      const now = clock();
      const elapsed = now - last;
      last = now;
      // A dense stretch played fast is folded a bounded part per frame: it plays slower there, and frames stay short.
      if (playing) await replay.advanceTo(replay.clock + elapsed * speed, REPLAY_EVENTS_PER_FRAME);
      if (replay.finished) playing = false;
    },
    // A replay reads as its clock moves, in its frames.
    readMore: () => Promise.resolve(false),
    view: () => replay.view(),
    now: () => replay.clock,
    transcript: (agentId) => replay.transcript(agentId),
    diff,
    replay: controls,
  };
}
