import type { RecordedEvent } from '../events/event-types.js';
import { followRun, type EventReader } from '../observe/replay/run-reader.js';
import { mayHoldRuns, openRunLogToRead, type RunState } from '../orchestrator/setup/run-state.js';
import type { EventQuery } from '../store/events/event-store.js';
import type { EventStore } from '../store/events/event-store.js';
import { liveSource } from '../ui/tui/sources.js';
import { agentDiffReader } from './agent-diff.js';
import type { CommandContext } from './command-context.js';
import { announcingPromptOverrides } from './prompt-override-notice.js';
import { showTerminalUi } from './terminal-ui.js';
import { steeringActions } from './tui-actions.js';

/** How a run shows itself while it goes: `onEvent` for the session, and `close` once it returns. */
export interface RunDisplay {
  readonly onEvent: (event: RecordedEvent) => void;
  /** Takes the terminal UI down (when there is one) and prints what it held back. */
  close(): Promise<void>;
}

export interface RunDisplayOptions {
  /** True unless `--no-tui`, `--json` or `--quiet`. */
  readonly tui: boolean;
  /** Where the run's log is: its state directory, or the store. */
  readonly state: RunState;
  readonly repoDir: string;
  /** The progress printer for plain lines, when there is no terminal UI. */
  readonly progress: ((event: RecordedEvent) => void) | undefined;
}

/**
 * The terminal UI when colony runs in a terminal (and was not told otherwise), plain progress
 * lines when it does not. The UI reads the run's log like `colony tui` does, so what it shows
 * is what another terminal attached to the run shows; `q` asks before it stops the run, and
 * Ctrl-C stops it as it does without the UI.
 */
export function startRunDisplay(ctx: CommandContext, options: RunDisplayOptions): RunDisplay {
  if (!options.tui || ctx.terminal === undefined) {
    return { onEvent: announcingPromptOverrides(ctx, options.progress), close: () => Promise.resolve() };
  }
  // Lines written under the UI would tear it: notices wait until it is down.
  const heldBack: string[] = [];
  const reader = lazyLog(options.state);
  const interrupt = () => process.kill(process.pid, 'SIGINT');
  const ui = showTerminalUi(
    ctx.terminal,
    {
      source: liveSource(followRun(reader), agentDiffReader(options.repoDir)),
      actions: steeringActions(options.state, ctx.secrets ?? []),
      quitQuestion: 'Stop the run? Its unfinished tasks wait for colony resume.',
      onQuit: interrupt,
      onInterrupt: interrupt,
    },
    { exitOnCtrlC: false, color: ctx.color ?? true },
  );
  return {
    onEvent: announcingPromptOverrides({ ...ctx, stderr: (text) => heldBack.push(text) }, undefined),
    close: async () => {
      ui.close();
      await ui.closed;
      await reader.close();
      for (const text of heldBack) ctx.stderr(text);
    },
  };
}

/** The run's log, opened once the run has made it: until then it reads as empty. */
function lazyLog(state: RunState): EventReader & { close(): Promise<void> } {
  let events: EventStore | null = null;
  return {
    async read(query: EventQuery) {
      if (events === null) {
        if (!mayHoldRuns(state)) return [];
        try {
          events = await openRunLogToRead(state);
        } catch {
          // The run is making its log this moment, or the store did not answer: it is opened on a later frame.
          return [];
        }
      }
      return events.read(query);
    },
    async close() {
      await events?.close();
    },
  };
}
