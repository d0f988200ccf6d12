import type { ContextPolicy } from '../../agent/compaction.js';
import type { AgentRecorder } from '../../agent/types.js';
import type { ReminderPolicy } from '../../agent/reminders.js';
import { contextWindowFor, outputLimitFor } from '../../model/context-windows.js';
import type { FreshnessSettings } from '../../events/run-settings.js';
import type { PriorAgent } from '../resume/prior-agents.js';
import { fillPlaceholders, type PromptSet } from '../prompts/prompt-set.js';

/** What the agent loop of one agent is given to stay fresh. */
export interface LoopFreshness {
  readonly context: ContextPolicy;
  readonly reminders: ReminderPolicy;
}

/** The context policy and reminders of one agent, their texts from the run's prompts. */
export function loopFreshness(freshness: FreshnessSettings, kind: 'planner' | 'worker', modelSpec: string, prompts: PromptSet): LoopFreshness {
  const scratchpadEvery = freshness.scratchpadEvery[kind];
  return {
    context: {
      windowTokens: contextWindowFor(modelSpec, freshness.contextWindows),
      outputTokens: outputLimitFor(modelSpec, freshness.outputLimits),
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
