import type { Key } from 'ink';
import type { RunView } from '../../observe/view/run-view.js';
import { DETAIL_TABS, type DetailTab } from './detail-lines.js';
import type { PromptState } from './footer.js';
import type { TreeRow } from './tree-rows.js';
import type { ReplayControls, SteeringOutcome, TuiActions } from './tui-source.js';
import { errorMessage } from '../../errors/error-message.js';

/** What the body shows: the tree, or one agent's page scrolled to `offset`. */
export type Screen = { readonly kind: 'tree' } | { readonly kind: 'detail'; readonly agentId: string; readonly tab: DetailTab; readonly offset: number };

/** What a key may read and change. */
export interface KeyContext {
  readonly screen: Screen;
  readonly rows: readonly TreeRow[];
  readonly selectedId: string | null;
  readonly view: RunView | null;
  readonly prompt: PromptState | null;
  readonly actions: TuiActions | null;
  readonly replay: ReplayControls | null;
  /** Lines one page-down moves. */
  readonly pageLines: number;
  /** Lines in the agent page's current tab. */
  readonly detailLines: number;
  readonly quitQuestion: string | null;
  setScreen(screen: Screen): void;
  setSelectedId(agentId: string): void;
  /** Folds (true), unfolds (false) or flips (undefined) the agents below one agent. */
  toggleCollapsed(agentId: string, collapse?: boolean): void;
  nextSort(): void;
  /** Leaves ended agents out of the tree, or puts them back. */
  toggleHideEnded(): void;
  setPrompt(prompt: PromptState | null): void;
  /** Shows a line in the footer: what a key did, or why it could not. */
  say(ok: boolean, text: string): void;
  quit(): void;
  /** Ctrl-C. */
  interrupt(): void;
}

/**
 * Does what the keys of one read from the terminal mean. A terminal hands over several keys at
 * once when they come faster than they are read (a paste, keys sent by a script): each is
 * handled in turn, a line typed into a prompt as one piece up to its Enter.
 */
export function handleKeys(context: KeyContext, input: string, key: Key): void {
  if (input.length <= 1 || key.ctrl || key.meta || key.escape) {
    handleKey(context, input, key);
    return;
  }
  const plain: Key = { ...key, return: false };
  for (const piece of input.split(/(\r|\n)/)) {
    if (piece === '') continue;
    if (piece === '\r' || piece === '\n') handleKey(context, '', { ...plain, return: true });
    else if (context.prompt !== null) handleKey(context, piece, plain);
    else for (const character of piece) handleKey(context, character, plain);
  }
}

/** Does what a key press means where the user is: typing into a prompt, on the tree, or on an agent's page. */
export function handleKey(context: KeyContext, input: string, key: Key): void {
  if (key.ctrl && input === 'c') {
    context.interrupt();
    return;
  }
  if (context.prompt !== null) {
    typeIntoPrompt(context, context.prompt, input, key);
    return;
  }
  if (replayKey(context, context.replay, input)) return;
  if (steeringKey(context, input)) return;
  if (input === 'q' && (context.screen.kind === 'tree' || context.screen.kind === 'detail')) {
    if (context.screen.kind === 'detail') {
      context.setScreen({ kind: 'tree' });
      return;
    }
    if (context.quitQuestion === null) context.quit();
    else context.setPrompt({ kind: 'quit', label: `${context.quitQuestion} (y/n)`, text: '', target: null });
    return;
  }
  if (context.screen.kind === 'detail') detailKey(context, context.screen, input, key);
  else treeKey(context, input, key);
}

function treeKey(context: KeyContext, input: string, key: Key): void {
  const { rows } = context;
  const index = Math.max(0, rows.findIndex((row) => row.agent.id === context.selectedId));
  const move = (to: number) => {
    const row = rows[Math.min(rows.length - 1, Math.max(0, to))];
    if (row !== undefined) context.setSelectedId(row.agent.id);
  };
  const row = rows[index];
  if (key.upArrow || input === 'k') move(index - 1);
  else if (key.downArrow || input === 'j') move(index + 1);
  else if (key.pageUp) move(index - context.pageLines);
  else if (key.pageDown) move(index + context.pageLines);
  else if (input === 'g' || key.home) move(0);
  else if (input === 'G' || key.end) move(rows.length - 1);
  else if (input === 's') context.nextSort();
  else if (input === 'f') context.toggleHideEnded();
  else if (row === undefined) return;
  else if (key.return) context.setScreen({ kind: 'detail', agentId: row.agent.id, tab: 'transcript', offset: 0 });
  else if (input === ' ') context.toggleCollapsed(row.agent.id);
  else if (key.rightArrow || input === 'l') context.toggleCollapsed(row.agent.id, false);
  else if (key.leftArrow || input === 'h') {
    if (row.children > 0 && !row.collapsed) context.toggleCollapsed(row.agent.id, true);
    else if (row.agent.parentId !== null) context.setSelectedId(row.agent.parentId);
  }
}

function detailKey(context: KeyContext, screen: Extract<Screen, { kind: 'detail' }>, input: string, key: Key): void {
  const last = Math.max(0, context.detailLines - context.pageLines);
  const scroll = (offset: number) => context.setScreen({ ...screen, offset: Math.min(last, Math.max(0, offset)) });
  const number = Number(input);
  if (key.escape || key.backspace || key.delete) context.setScreen({ kind: 'tree' });
  else if (Number.isInteger(number) && number >= 1 && number <= DETAIL_TABS.length) context.setScreen({ ...screen, tab: DETAIL_TABS[number - 1] ?? 'transcript', offset: 0 });
  else if (key.tab) context.setScreen({ ...screen, tab: DETAIL_TABS[(DETAIL_TABS.indexOf(screen.tab) + 1) % DETAIL_TABS.length] ?? 'transcript', offset: 0 });
  else if (key.upArrow || input === 'k') scroll(screen.offset - 1);
  else if (key.downArrow || input === 'j') scroll(screen.offset + 1);
  else if (key.pageUp) scroll(screen.offset - context.pageLines);
  else if (key.pageDown || input === ' ') scroll(screen.offset + context.pageLines);
  else if (input === 'g' || key.home) scroll(0);
  else if (input === 'G' || key.end) scroll(last);
}

/** The keys of a replay: play and pause, one event at a time, faster and slower. */
function replayKey(context: KeyContext, replay: ReplayControls | null, input: string): boolean {
  if (replay === null) return false;
  if (input === 'p') replay.toggle();
  else if (input === '.') replay.step().catch((error: unknown) => context.say(false, `colony could not read the next event: ${errorMessage(error)}`));
  else if (input === '>') replay.faster();
  else if (input === '<') replay.slower();
  else return false;
  return true;
}

/** The agent a steering key is about: the one whose page is open, else the one selected. */
function focusedAgent(context: KeyContext): string | null {
  return context.screen.kind === 'detail' ? context.screen.agentId : context.selectedId;
}

function steeringKey(context: KeyContext, input: string): boolean {
  if (!['a', 'x', 'w', '+', '-', 'm'].includes(input)) return false;
  const { actions, view } = context;
  if (actions === null) {
    context.say(false, context.replay !== null ? 'A replay only shows the run; steer a live run with colony tui.' : 'The run has ended: there is nothing to steer.');
    return true;
  }
  const agentId = focusedAgent(context);
  const agent = view?.agents.find((candidate) => candidate.id === agentId) ?? null;
  const workers = view?.status.workers ?? null;
  switch (input) {
    case 'a':
      report(context, actions.toggleAndon('paused from the terminal UI'));
      return true;
    case 'x':
      if (agent === null) context.say(false, 'Select an agent to stop first.');
      else context.setPrompt({ kind: 'stop', label: `Stop ${agent.role} ${agent.id} "${agent.title}"? Its task closes as failed and its planner hears why. (y/n)`, text: '', target: agent.id });
      return true;
    case 'w':
      context.setPrompt({ kind: 'workers', label: `Workers at once (now ${workers ?? '?'}):`, text: '', target: null });
      return true;
    case '+':
    case '-':
      report(context, actions.changeWorkers(input === '+' ? 1 : -1));
      return true;
    case 'm': {
      // A worker takes no messages: the message goes to the planner that published its task.
      const planner = agent === null ? null : agent.role === 'worker' ? agent.parentId : agent.id;
      context.setPrompt({ kind: 'message', label: `Message to ${planner ?? 'the root planner'}:`, text: '', target: planner });
      return true;
    }
    default:
      return false;
  }
}

function typeIntoPrompt(context: KeyContext, prompt: PromptState, input: string, key: Key): void {
  if (key.escape) {
    context.setPrompt(null);
    return;
  }
  if (prompt.kind === 'stop' || prompt.kind === 'quit') {
    context.setPrompt(null);
    if (input !== 'y' && input !== 'Y') return;
    if (prompt.kind === 'quit') context.quit();
    else if (context.actions !== null && prompt.target !== null) report(context, context.actions.stop(prompt.target, 'stopped from the terminal UI'));
    return;
  }
  if (key.return) {
    context.setPrompt(null);
    submit(context, prompt);
    return;
  }
  if (key.backspace || key.delete) context.setPrompt({ ...prompt, text: prompt.text.slice(0, -1) });
  else if (input !== '' && !key.ctrl && !key.meta) context.setPrompt({ ...prompt, text: prompt.text + input });
}

function submit(context: KeyContext, prompt: PromptState): void {
  const { actions } = context;
  if (actions === null) return;
  if (prompt.kind === 'message') {
    report(context, actions.say(prompt.target, prompt.text));
    return;
  }
  const workers = Number(prompt.text.trim());
  if (!Number.isInteger(workers) || workers < 1) {
    context.say(false, `"${prompt.text}" is not a number of workers: type a whole number, 1 or more.`);
    return;
  }
  report(context, actions.setWorkers(workers));
}

/** Shows in the footer what a steering key did, once the store has taken (or refused) the change. */
function report(context: KeyContext, outcome: Promise<SteeringOutcome>): void {
  outcome.then(
    ({ ok, message }) => context.say(ok, message),
    (error: unknown) => context.say(false, `colony could not record that: ${errorMessage(error)}`),
  );
}
