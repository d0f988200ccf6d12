import { Box, Text, useApp, useInput, useStdout } from 'ink';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { AgentTranscript } from '../../observe/replay/agent-transcript.js';
import type { RunView } from '../../observe/view/run-view.js';
import { AgentDetail } from './agent-detail.js';
import { AgentTree } from './agent-tree.js';
import { detailLines } from './detail-lines.js';
import { EventTail } from './event-tail.js';
import { Footer, type PromptState } from './footer.js';
import { HEADER_LINES, Header } from './header.js';
import { handleKeys, type KeyContext, type Screen } from './keys.js';
import { TREE_SORTS, treeRows, type TreeRow, type TreeSort } from './tree-rows.js';
import type { TuiActions, TuiSource } from './tui-source.js';
import { errorMessage } from '../../errors/error-message.js';

export interface TuiAppProps {
  readonly source: TuiSource;
  /** The steering keys' effects; null for a replay. A finished run refuses each key, saying so. */
  readonly actions: TuiActions | null;
  /** A fixed size, for tests; otherwise the terminal's, followed as it is resized. */
  readonly size?: { readonly columns: number; readonly rows: number };
  /** How often the view is read and drawn again; a bounded rate however fast the log grows. */
  readonly frameMs?: number;
  /** Asked before `q` quits (`colony run`: quitting stops the run); null quits at once. */
  readonly quitQuestion?: string | null;
  /** Called when the user quits, before the app unmounts. */
  readonly onQuit?: () => void;
  /** Ctrl-C, when the app is rendered without Ink's own exit on Ctrl-C (`colony run`: it stops the run). */
  readonly onInterrupt?: () => void;
}

/** What the keys change: which page, which agent, what is folded, how sorted, what is being typed. */
interface UiState {
  readonly screen: Screen;
  readonly selectedId: string | null;
  readonly collapsed: ReadonlySet<string>;
  readonly sort: TreeSort;
  /** Ended agents are left out of the tree (the `f` key). */
  readonly hideEnded: boolean;
  readonly prompt: PromptState | null;
  readonly flash: { readonly ok: boolean; readonly text: string; readonly at: number } | null;
}

const TAIL_LINES = 8;
const FOOTER_LINES = 2;
const FLASH_MS = 6_000;

/** colony's terminal UI: the header, the agent tree (or one agent's page), the event tail, the keys. */
export function TuiApp({ source, actions, size, frameMs = 250, quitQuestion = null, onQuit, onInterrupt }: TuiAppProps) {
  const { exit } = useApp();
  const terminal = useTerminalSize(size);
  const [view, setView] = useState<RunView | null>(null);
  // Nothing is drawn before the first frame has read the log, so the first screen is the run as
  // its log holds it, not a moment of waiting for a read already under way.
  const [opened, setOpened] = useState(false);
  // What the keys change lives in a ref, read afresh by every key press: keys that arrive
  // faster than the screen redraws (typing, a paste) each see what the one before did.
  const ui = useRef<UiState>({ screen: { kind: 'tree' }, selectedId: null, collapsed: new Set(), sort: 'tree', hideEnded: false, prompt: null, flash: null });
  const [, redraw] = useState(0);
  const update = (change: Partial<UiState>) => {
    ui.current = { ...ui.current, ...change };
    redraw((count) => count + 1);
  };
  const { screen, collapsed, sort, hideEnded, prompt, flash } = ui.current;
  const [transcript, setTranscript] = useState<AgentTranscript | null>(null);
  const [diff, setDiff] = useState<string | null>(null);

  useEffect(() => {
    let mounted = true;
    // A frame whose read is still going (a slow store) is not joined by another: two reads at
    // once would only queue behind each other, and the screen would fall further behind.
    let reading = false;
    const frame = () => {
      if (reading) return;
      reading = true;
      // readFrame settles every failure into its result, to be said in the footer.
      void readFrame(source).then((read) => {
        reading = false;
        if (!mounted) return;
        if (read.error === null) setView(read.view);
        else update({ flash: { ok: false, text: read.error, at: Date.now() } });
        setOpened(true);
      });
    };
    frame();
    const timer = setInterval(frame, frameMs);
    return () => {
      mounted = false;
      clearInterval(timer);
    };
  }, [source, frameMs]);

  // What a frame left unread of a long log is read between frames, a bounded part a turn of the
  // event loop, so frames and keys keep their turns while it is read at full speed. A read that
  // fails stops this; the next frame reads the log itself and says what went wrong.
  useEffect(() => {
    let mounted = true;
    // True from the first read of a stretch until one finds the log caught up (or fails).
    let reading = false;
    let next: NodeJS.Immediate | undefined;
    const readMore = () => {
      next = undefined;
      source.readMore().then(
        (more) => {
          if (more && mounted) next = setImmediate(readMore);
          else reading = false;
        },
        () => {
          // Left to the next frame, as above.
          reading = false;
        },
      );
    };
    const start = () => {
      if (reading) return;
      reading = true;
      next = setImmediate(readMore);
    };
    start();
    const timer = setInterval(start, frameMs);
    return () => {
      mounted = false;
      clearInterval(timer);
      if (next !== undefined) clearImmediate(next);
    };
  }, [source, frameMs]);

  const detailAgent = screen.kind === 'detail' ? screen.agentId : null;
  // An agent's page is read again as its log grows, at most once a second. A read that fails is
  // said in the footer, and the page shows what was read before until the next read.
  useEffect(() => {
    if (detailAgent === null) return;
    let current = true;
    let reading = false;
    const read = () => {
      if (reading) return;
      reading = true;
      source.transcript(detailAgent).then(
        (page) => {
          reading = false;
          if (current) setTranscript(page);
        },
        (error: unknown) => {
          reading = false;
          if (current) update({ flash: { ok: false, text: `colony could not read the run's log this time (it tries again): ${errorMessage(error)}`, at: Date.now() } });
        },
      );
    };
    read();
    const timer = setInterval(read, Math.max(1_000, frameMs));
    return () => {
      current = false;
      clearInterval(timer);
    };
  }, [source, detailAgent, frameMs]);

  const tab = screen.kind === 'detail' ? screen.tab : null;
  const transcriptAgent = transcript?.agentId ?? null;
  // The diff is read when its tab opens for an agent, not again on every refresh of the transcript.
  useEffect(() => {
    if (tab !== 'diff' || transcript === null || transcriptAgent !== detailAgent) return;
    let current = true;
    setDiff(null);
    source.diff(transcript).then(
      (text) => current && setDiff(text),
      (error: unknown) => current && setDiff(`colony could not read the diff: ${errorMessage(error)}`),
    );
    return () => {
      current = false;
    };
  }, [source, tab, detailAgent, transcriptAgent]);

  const rows = useMemo(() => treeRows(view?.agents ?? [], collapsed, sort, hideEnded), [view, collapsed, sort, hideEnded]);
  const selected = selectedIn(rows, ui.current.selectedId);
  const hiddenEnded = hideEnded ? (view?.agents ?? []).filter((agent) => agent.endedAt !== null).length : 0;
  // A short terminal gives up the event tail before the tree: the screen never outgrows it.
  const tailLines = screen.kind === 'tree' ? Math.max(0, Math.min(TAIL_LINES, terminal.rows - HEADER_LINES - FOOTER_LINES - 6)) : 0;
  const bodyHeight = Math.max(2, terminal.rows - HEADER_LINES - FOOTER_LINES - tailLines);
  // Until the page's agent is read, the one read before is not shown under its name.
  const pageTab = screen.kind === 'detail' && transcript?.agentId === screen.agentId ? screen.tab : null;
  const lines = useMemo(() => (pageTab === null || transcript === null ? [] : detailLines(pageTab, transcript, diff, terminal.columns)), [pageTab, transcript, diff, terminal.columns]);

  const context: KeyContext = {
    get screen() {
      return ui.current.screen;
    },
    get rows() {
      return treeRows(view?.agents ?? [], ui.current.collapsed, ui.current.sort, ui.current.hideEnded);
    },
    get selectedId() {
      return selectedIn(this.rows, ui.current.selectedId);
    },
    view,
    get prompt() {
      return ui.current.prompt;
    },
    actions,
    replay: source.replay,
    pageLines: Math.max(1, bodyHeight - 2),
    detailLines: lines.length,
    quitQuestion,
    setScreen: (next) => update({ screen: next }),
    setSelectedId: (agentId) => update({ selectedId: agentId }),
    toggleCollapsed: (agentId, collapse) => {
      const next = new Set(ui.current.collapsed);
      if (collapse ?? !next.has(agentId)) next.add(agentId);
      else next.delete(agentId);
      update({ collapsed: next });
    },
    toggleHideEnded: () => update({ hideEnded: !ui.current.hideEnded }),
    nextSort: () => update({ sort: TREE_SORTS[(TREE_SORTS.indexOf(ui.current.sort) + 1) % TREE_SORTS.length] ?? 'tree' }),
    setPrompt: (next) => update({ prompt: next }),
    say: (ok, text) => update({ flash: { ok, text, at: Date.now() } }),
    quit: () => {
      onQuit?.();
      exit();
    },
    interrupt: () => onInterrupt?.(),
  };
  useInput((input, key) => handleKeys(context, input, key));

  if (!opened) return null;
  if (view === null) {
    return (
      <Box flexDirection="column">
        <Text>colony: {source.describe()}: waiting for the run to start…</Text>
        <Text dimColor>q quits</Text>
      </Box>
    );
  }
  const shownFlash = flash !== null && Date.now() - flash.at < FLASH_MS ? flash : null;
  const detailAgentView = detailAgent === null ? null : (view.agents.find((agent) => agent.id === detailAgent) ?? null);
  return (
    <Box flexDirection="column" width={terminal.columns}>
      <Header view={view} width={terminal.columns} mode={source.describe()} hideEnded={hideEnded} />
      {screen.kind === 'detail' ? (
        <AgentDetail agent={detailAgentView} agentId={screen.agentId} tab={screen.tab} lines={lines} offset={screen.offset} width={terminal.columns} height={bodyHeight} />
      ) : (
        <>
          <AgentTree rows={rows} selectedId={selected} sort={sort} hiddenEnded={hiddenEnded} width={terminal.columns} height={bodyHeight} now={source.now()} />
          {tailLines === 0 ? null : <EventTail tail={view.tail} width={terminal.columns} height={tailLines} />}
        </>
      )}
      <Footer prompt={prompt} flash={shownFlash} keys={keyHelp({ screen: screen.kind, steerable: actions !== null, replay: source.replay !== null, hideEnded }, terminal.columns)} width={terminal.columns} />
    </Box>
  );
}

/**
 * One frame's read of the source. A log that cannot be read this time (busy, being created, a
 * disk error) is said in the footer and read again next frame; it never takes the process down,
 * which for `colony run` is the run itself. Never rejects.
 */
async function readFrame(source: TuiSource): Promise<{ view: RunView | null; error: string | null }> {
  try {
    await source.tick();
    return { view: source.view(), error: null };
  } catch (error) {
    return { view: null, error: `colony could not read the run's log this time (it tries again): ${errorMessage(error)}` };
  }
}

/** The selected agent: the one chosen, while it is in the list; else the first row. */
function selectedIn(rows: readonly TreeRow[], chosen: string | null): string | null {
  return chosen !== null && rows.some((row) => row.agent.id === chosen) ? chosen : (rows[0]?.agent.id ?? null);
}

/** What the footer's key help depends on. */
export interface KeyHelpFacts {
  readonly screen: Screen['kind'];
  readonly steerable: boolean;
  readonly replay: boolean;
  readonly hideEnded: boolean;
}

/**
 * The keys there are, in the longest wording that fits `width`: a narrow terminal is told the
 * keys in fewer words (the arrows, `g`/`G` and `+`/`-` are left to the docs) rather than cut mid-word.
 */
export function keyHelp({ screen, steerable, replay, hideEnded }: KeyHelpFacts, width: number): string {
  const ended = `f ${hideEnded ? 'show' : 'hide'} ended`;
  const steering = steerable ? ' a andon  x stop  w/+/- workers  m message ·' : '';
  const steeringShort = steerable ? ' a andon  x stop  w workers  m msg ·' : '';
  const playback = replay ? ' p play/pause  . step  < > speed ·' : '';
  const playbackShort = replay ? ' p play  . step  < > speed ·' : '';
  const wordings =
    screen === 'detail'
      ? [
          `1-4/tab pages  ↑↓ PgUp PgDn g G scroll  esc back ·${steering}${playback} q quit`,
          `1-4 pages  ↑↓ PgUp PgDn g G  esc back ·${steeringShort}${playbackShort} q quit`,
          `1-4 pages  ↑↓ PgUp PgDn  esc back ·${steeringShort}${playbackShort} q quit`,
        ]
      : [
          `↑↓ select  enter open  space fold  s sort  ${ended} ·${steering}${playback} q quit`,
          `enter open  space fold  s sort  ${ended} ·${steeringShort}${playbackShort} q quit`,
          `space fold  s sort  ${ended} ·${steeringShort}${playbackShort} q quit`,
        ];
  return wordings.find((wording) => wording.length <= width) ?? wordings.at(-1) ?? '';
}

function useTerminalSize(fixed: TuiAppProps['size']): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const read = () => fixed ?? { columns: stdout.columns || 100, rows: stdout.rows || 30 };
  const [size, setSize] = useState(read);
  useEffect(() => {
    if (fixed !== undefined) return;
    const resized = () => setSize({ columns: stdout.columns || 100, rows: stdout.rows || 30 });
    stdout.on('resize', resized);
    return () => {
      stdout.off('resize', resized);
    };
  }, [stdout, fixed]);
  return fixed ?? size;
}
