import { DEFAULT_KEPT_TURNS, DEFAULT_THRESHOLD, type ContextPolicy } from '../../agent/compaction.js';
import type { AgentRecorder } from '../../agent/types.js';
import type { ReminderPolicy } from '../../agent/reminders.js';
import { contextWindowFor, NO_CONTEXT_WINDOW_OVERRIDES, type ContextWindowOverrides } from '../../model/context-windows.js';
import type { PriorAgent } from '../resume/prior-agents.js';
import { fillPlaceholders, type PromptSet } from '../prompts/prompt-set.js';

/** A number of steps for each kind of agent; null turns the thing off for that kind. */
export interface StepsByKind {
  readonly planner: number | null;
  readonly worker: number | null;
}

/**
 * What keeps a run's agents fresh over a long run: the context windows and when to compact,
 * the reminders and their intervals, and whether a claim of done needs evidence first.
 * Recorded with the run's settings, so a resumed run keeps them.
 */
export interface AgentFreshness {
  readonly contextWindows: ContextWindowOverrides;
  /** Share of the window above which a conversation is made smaller (0.8: at 80%). */
  readonly threshold: number;
  /** false (`--no-compaction`): conversations are never cut, and may outgrow their window. */
  readonly compaction: boolean;
  /** Answers kept as they are after a summary. */
  readonly keptTurns: number;
  readonly reflectEvery: StepsByKind;
  readonly scratchpadEvery: StepsByKind;
  /** A worker's first claim of done without evidence is sent back for it. */
  readonly evidenceFirst: boolean;
}

export const DEFAULT_FRESHNESS: AgentFreshness = {
  contextWindows: NO_CONTEXT_WINDOW_OVERRIDES,
  threshold: DEFAULT_THRESHOLD,
  compaction: true,
  keptTurns: DEFAULT_KEPT_TURNS,
  reflectEvery: { planner: 40, worker: 25 },
  scratchpadEvery: { planner: 20, worker: 15 },
  evidenceFirst: true,
};

/** What the agent loop of one agent is given to stay fresh. */
export interface LoopFreshness {
  readonly context: ContextPolicy;
  readonly reminders: ReminderPolicy;
}

/** The context policy and reminders of one agent, their texts from the run's prompts. */
export function loopFreshness(freshness: AgentFreshness, kind: 'planner' | 'worker', modelSpec: string, prompts: PromptSet): LoopFreshness {
  const scratchpadEvery = freshness.scratchpadEvery[kind];
  return {
    context: {
      windowTokens: contextWindowFor(modelSpec, freshness.contextWindows),
      threshold: freshness.threshold,
      compaction: freshness.compaction,
      compactionPrompt: prompts.text('compaction'),
      keptTurns: freshness.keptTurns,
    },
    reminders: {
      reflectEvery: freshness.reflectEvery[kind],
      reflectText: prompts.text('reflect-reminder'),
      scratchpadEvery,
      scratchpadText: fillPlaceholders(prompts.text('scratchpad-reminder'), { STEPS: String(scratchpadEvery ?? 0) }),
    },
  };
}

/** One agent's scratchpad: the latest content, replaced whole by each write and recorded. */
export interface Scratchpad {
  read(): string | null;
  write(content: string): void;
}

/**
 * The agent's scratchpad, starting from the last one it wrote before a restart. `record`
 * false leaves the recording to the caller (a planner's board records its own).
 */
export function createScratchpad(recorder: AgentRecorder, prior: PriorAgent | null, record = true): Scratchpad {
  const written = prior?.events.findLast((event) => event.type === 'scratchpad.written');
  let content: string | null = written?.type === 'scratchpad.written' ? written.data.content : null;
  return {
    read: () => content,
    write(next) {
      content = next;
      if (record) recorder.record({ type: 'scratchpad.written', data: { content: next } });
    },
  };
}
