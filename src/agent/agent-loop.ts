import { readFileSync } from 'node:fs';
import { stoppedReason } from '../events/agent-stops.js';
import type { ChatModel, PromptCacheHint } from '../model/chat-model.js';
import { MIN_CONTEXT_WINDOW } from '../model/context-windows.js';
import { conversationLength, type Message } from '../model/messages.js';
import type { AnyTool } from '../tools/tool.js';
import { resumeTurn, type AgentRestore } from './agent-restore.js';
import type { AgentRecorder } from './types.js';
import { fitToWindow, type ContextPolicy, type Fitted } from './compaction.js';
import { TokenEstimator } from './context-size.js';
import { cutOffOf } from './cut-off-call.js';
import { callModelForStep, type ParkingOptions } from './model-call.js';
import { ReminderSchedule, type ReminderPolicy } from './reminders.js';
import { toolSpecs } from './tool-dispatch.js';
import { runToolCalls } from './tool-turn.js';
import { StandingNotices, type StandingNotice } from './standing-notices.js';


const NO_TOOL_CALL_NUDGE = readFileSync(new URL('./nudge-no-tool-call.md', import.meta.url), 'utf8').trim();
const SCRATCHPAD_CONTEXT = readFileSync(new URL('./scratchpad-context.md', import.meta.url), 'utf8').trim();

export interface AgentLoopOptions {
  readonly model: ChatModel;
  readonly tools: readonly AnyTool[];
  readonly systemPrompt: string;
  /** The first user message: the task itself. */
  readonly task: string;
  readonly recorder: AgentRecorder;
  /** Model calls the agent may make before it is stopped. */
  readonly maxSteps: number;
  /** Turns in a row whose every tool call was rejected before the agent is stopped. */
  readonly maxRejectedTurns?: number;
  /** Turns in a row without any tool call before the agent is stopped. */
  readonly maxIdleTurns?: number;
  readonly signal?: AbortSignal;
  /** Where a planner's messages come from (its children's handoffs, a person's messages). */
  readonly inbox?: AgentInbox;
  /** What the agent is told after an answer without tool calls; defaults to the worker's nudge. */
  readonly noToolCallNudge?: string;
  /**
   * Awaited before each model call: a planner's view of main is brought up to date here. A
   * returned text is told to the agent (and recorded as a nudge) before the call; a stop ends
   * the agent without the call (its budget is used up).
   */
  readonly beforeModelCall?: (step: number) => Promise<ModelCallCheck>;
  /**
   * How long the agent waits when its provider is unavailable (rate limited, overloaded,
   * failing, unreachable, or its circuit open) before calling again; see DEFAULT_PARKING_POLICY.
   */
  readonly parking?: ParkingOptions;
  /**
   * Asked each time a park ends, before the agent calls its provider again: a reason stops the
   * agent there (its run's time or budget ran out while it waited).
   */
  readonly stopWaiting?: () => string | null;
  /**
   * Continue a rebuilt conversation instead of starting from the task.
   * `systemPrompt` and `task` are then in its messages already; `maxSteps` counts its steps too.
   */
  readonly restore?: AgentRestore;
  /**
   * The agent's prompt-cache key, the same for all its calls: each request then names where its
   * stable prefix ends (see `PromptCacheHint`). No hint is sent when absent.
   */
  readonly cacheKey?: string;
  /** Keeps the conversation inside the model's context window (see `fitToWindow`); nothing is cut when absent. */
  readonly context?: ContextPolicy;
  /**
   * The agent's scratchpad as it stands now, or null before its first write. It is shown after
   * the conversation in every request, not kept in it, so it is always the latest and never
   * piles up.
   */
  readonly scratchpad?: () => string | null;
  /** Reminders on a schedule: reflect on the goal, rewrite the scratchpad. None when absent. */
  readonly reminders?: ReminderPolicy;
  /**
   * colony's standing notices as they stand before a model call, asked after `beforeModelCall`:
   * shown after the conversation, the latest of each kind only (see `StandingNotices`). A kind
   * left out is withdrawn. None when absent.
   */
  readonly notices?: () => readonly StandingNotice[];
}

/** What `beforeModelCall` says: nothing, a text to tell the agent first, or stop with a reason. */
export type ModelCallCheck = string | null | { readonly stop: string };

/**
 * A planner's inbox, as the loop sees it. Messages are taken into the conversation before each
 * model call; a planner with nothing to do waits on `wait` instead of calling the model.
 */
export interface AgentInbox {
  /** Messages that arrived since the last take, oldest first, each taken once. */
  take(): Promise<InboxDelivery[]>;
  /**
   * Whether a message is due: unread ones, or tasks below that will hand off without anyone
   * acting (running, or able to start). Tasks held back by an andon do not count.
   */
  pending(): Promise<{ readonly unread: number; readonly openChildren: number }>;
  /** Resolves when a message may have arrived, or when `signal` aborts. */
  wait(signal: AbortSignal): Promise<void>;
}

export interface InboxDelivery {
  readonly fromTaskId: string | null;
  readonly content: string;
  /** The message's place in the inbox, recorded in `message.received` so a restart knows it was taken. */
  readonly inboxSeq?: number;
}

export type AgentOutcome =
  | { readonly status: 'ended'; readonly steps: number }
  | {
      readonly status: 'failed';
      readonly steps: number;
      readonly reason: string;
      /** The last tool call the agent made, as `name(arguments)`, for the failure handoff. */
      readonly lastToolCall: string | null;
    };

/**
 * Runs one agent: call the model, validate and run its tool calls, feed the results back, until
 * a tool ends the agent (its handoff) or a limit stops it. Never throws for model or tool
 * failures; they end as a failed outcome that says why, except a provider that is only
 * unavailable for now: the agent is parked until it answers (see `callModelForStep`). With
 * `restore`, it first finishes the turn colony stopped in (see `resumeTurn`) and goes on from there.
 */
export async function runAgent(options: AgentLoopOptions): Promise<AgentOutcome> {
  const { model, recorder, restore } = options;
  const signal = options.signal ?? new AbortController().signal;
  const maxRejectedTurns = options.maxRejectedTurns ?? 5;
  const maxIdleTurns = options.maxIdleTurns ?? 3;
  const tools = toolSpecs(options.tools);
  const toolsByName = new Map(options.tools.map((tool) => [tool.name, tool]));
  const messages: Message[] =
    restore === undefined
      ? [
          { role: 'system', content: options.systemPrompt },
          { role: 'user', content: options.task },
        ]
      : [...restore.conversation.messages];
  let lastToolCall: string | null = restore?.conversation.lastToolCall ?? null;
  // A restart forgives idle and rejected turns: the counts start again.
  let idleTurns = 0;
  let rejectedTurns = 0;
  const fail = (steps: number, reason: string): AgentOutcome => ({ status: 'failed', steps, reason, lastToolCall });

  const inbox = options.inbox;
  let step = restore?.conversation.step ?? 0;
  const estimator = new TokenEstimator();
  let compactionFailedAt: number | null = null;
  /** The window as the provider showed it by refusing a request; the policy's until then. */
  let windowTokens: number | null = null;
  const lastScratchpadWrite = restore?.conversation.succeededCalls.findLast((call) => call.name === 'write_scratchpad')?.step ?? 0;
  const reminders = options.reminders === undefined ? null : new ReminderSchedule(options.reminders, lastScratchpadWrite);
  const standing = new StandingNotices(restore?.conversation.notices);
  /** The last message of the previous request's conversation: the prefix that request cached. */
  let cachedThrough: number | null = null;

  /** After an answer without tool calls: a planner with work out waits for it; null goes on. */
  const afterNoToolCall = async (): Promise<AgentOutcome | null> => {
    if (inbox !== undefined && (await waitForMessages(inbox, step, signal, recorder))) return null;
    if (signal.aborted) return fail(step, stoppedBecause(signal));
    idleTurns += 1;
    if (idleTurns >= maxIdleTurns) return fail(step, `the agent stopped calling tools (${idleTurns} turns in a row)`);
    const nudge = options.noToolCallNudge ?? NO_TOOL_CALL_NUDGE;
    recorder.record({ type: 'agent.nudged', data: { step, message: nudge } });
    messages.push({ role: 'user', content: nudge });
    return null;
  };
  /** After a turn that ended the agent: a planner that finished while a handoff is still due takes it in and replans. */
  const afterEnding = async (): Promise<AgentOutcome | null> => {
    if (inbox !== undefined && (await waitForMessages(inbox, step, signal, recorder))) return null;
    if (signal.aborted) return fail(step, stoppedBecause(signal));
    return { status: 'ended', steps: step };
  };

  if (restore !== undefined) {
    const resumed = await resumeTurn(restore, { toolsByName, signal, recorder, messages });
    lastToolCall = resumed.lastToolCall ?? lastToolCall;
    const outcome = resumed.ended ? await afterEnding() : resumed.idle ? await afterNoToolCall() : null;
    if (outcome !== null) return outcome;
  }

  while (step < options.maxSteps) {
    if (signal.aborted) return fail(step, stoppedBecause(signal));
    step += 1;
    if (inbox !== undefined) {
      for (const delivery of await inbox.take()) {
        const { fromTaskId, content, inboxSeq } = delivery;
        recorder.record({ type: 'message.received', data: { step, fromTaskId, content, ...(inboxSeq === undefined ? {} : { inboxSeq }) } });
        messages.push({ role: 'user', content });
      }
    }
    const notice = (await options.beforeModelCall?.(step)) ?? null;
    if (typeof notice === 'object' && notice !== null) return fail(step - 1, notice.stop);
    if (notice !== null) {
      recorder.record({ type: 'agent.nudged', data: { step, message: notice } });
      messages.push({ role: 'user', content: notice });
    }
    for (const reminder of reminders?.due(step) ?? []) {
      recorder.record({ type: 'agent.nudged', data: { step, message: reminder.text, reminder: reminder.kind } });
      messages.push({ role: 'user', content: reminder.text });
    }
    const notices = options.notices === undefined ? null : standing.update(options.notices(), step, recorder);
    const scratchpad = options.scratchpad?.() ?? null;
    const shown: Message[] = [
      ...(notices === null ? [] : [notices]),
      ...(scratchpad === null ? [] : [{ role: 'user' as const, content: SCRATCHPAD_CONTEXT.replace('{{SCRATCHPAD}}', () => scratchpad) }]),
    ];
    const extraChars = conversationLength(shown);
    const context = options.context === undefined ? undefined : { ...options.context, windowTokens: windowTokens ?? options.context.windowTokens };
    const fit = (lastFailedAt: number | null): Promise<Fitted> =>
      context === undefined
        ? Promise.resolve({ ok: true })
        : fitToWindow(messages, {
            model,
            tools,
            policy: context,
            estimator,
            step,
            signal,
            recorder,
            scratchpad,
            extraChars,
            lastFailedAt,
            ...(options.parking === undefined ? {} : { parking: options.parking }),
            ...(options.stopWaiting === undefined ? {} : { stopWaiting: options.stopWaiting }),
          });
    const ask = (outputTokens: number | undefined) =>
      callModelForStep({
        model,
        request: {
          messages: [...messages, ...shown],
          tools,
          ...(outputTokens === undefined ? {} : { maxOutputTokens: outputTokens }),
          ...cacheHint(options.cacheKey, cachedThrough, messages.length - 1),
        },
        step,
        signal,
        recorder,
        ...(options.parking === undefined ? {} : { parking: options.parking }),
        ...(options.stopWaiting === undefined ? {} : { stopWaiting: options.stopWaiting }),
      });
    const fitted = await fit(compactionFailedAt);
    if (!fitted.ok) return fail(step - 1, fitted.error);
    compactionFailedAt = fitted.failedAt ?? null;
    let outputTokens = fitted.outputTokens;
    let asked = await ask(outputTokens);
    if (context?.compaction === true && !asked.result.ok && asked.result.error.kind === 'context-length' && asked.stopped === undefined) {
      // The provider refused a request colony thought would fit: its window is smaller than
      // colony was told. Take its word from now on, make the conversation fit, and ask once more.
      windowTokens = Math.max(MIN_CONTEXT_WINDOW, Math.floor(estimator.estimate(messages, extraChars) * 0.95));
      context.windowTokens = windowTokens;
      const refitted = await fit(null);
      if (!refitted.ok) return fail(step - 1, refitted.error);
      outputTokens = refitted.outputTokens;
      asked = await ask(outputTokens);
    }
    cachedThrough = messages.length - 1;
    const { result, durationMs, stopped } = asked;
    if (stopped !== undefined) return fail(step - 1, stopped);
    if (!result.ok) {
      const { error } = result;
      if (error.kind === 'aborted') return fail(step - 1, stoppedBecause(signal));
      return fail(step - 1, `the model call failed after ${result.attempts} attempt(s): ${error.kind}: ${error.message}`);
    }
    const { turn } = result;
    estimator.observe(messages, extraChars, turn.usage);
    recorder.record({
      type: 'model.responded',
      data: {
        step,
        text: turn.text,
        toolCalls: [...turn.toolCalls],
        finishReason: turn.finishReason,
        usage: turn.usage,
        costUsd: turn.costUsd,
        durationMs,
        attempts: turn.attempts,
      },
    });
    messages.push({ role: 'assistant', text: turn.text, toolCalls: turn.toolCalls });

    if (turn.toolCalls.length === 0) {
      const outcome = await afterNoToolCall();
      if (outcome !== null) return outcome;
      continue;
    }
    idleTurns = 0;

    const answered = messages.length;
    const cutOff = cutOffOf(turn.finishReason, outputTokens);
    const turnResult = await runToolCalls(turn.toolCalls, { step, toolsByName, signal, recorder, messages, cutOff });
    reminders?.observeTurn(step, messages.slice(answered));
    lastToolCall = turnResult.lastToolCall ?? lastToolCall;
    if (turnResult.ended) {
      const outcome = await afterEnding();
      if (outcome !== null) return outcome;
      continue;
    }
    rejectedTurns = turnResult.allRejected ? rejectedTurns + 1 : 0;
    if (rejectedTurns >= maxRejectedTurns) {
      return fail(step, `the model sent only invalid tool calls for ${rejectedTurns} turns in a row`);
    }
  }
  return fail(options.maxSteps, `the step budget ran out (${options.maxSteps} model calls)`);
}

/**
 * The cache hint of a request whose conversation ends at message `end`: a breakpoint there, for
 * the next call to read, and one where the previous call's ended, to read what it wrote. The
 * previous one is dropped when a compaction made the conversation shorter than it.
 */
function cacheHint(key: string | undefined, previousEnd: number | null, end: number): { cache?: PromptCacheHint } {
  if (key === undefined) return {};
  const breakpoints = previousEnd !== null && previousEnd < end ? [previousEnd, end] : [end];
  return { cache: { key, breakpoints } };
}

/**
 * Waits until a message is there to take, as long as one is due. Returns true when there is
 * one (the loop goes on with it), false when none is due or the run was cancelled.
 */
async function waitForMessages(inbox: AgentInbox, step: number, signal: AbortSignal, recorder: AgentRecorder): Promise<boolean> {
  let pending = await inbox.pending();
  if (pending.unread > 0) return true;
  if (pending.openChildren === 0) return false;
  recorder.record({ type: 'agent.waiting', data: { step, openChildren: pending.openChildren } });
  await recorder.flush();
  while (!signal.aborted) {
    await inbox.wait(signal);
    pending = await inbox.pending();
    if (pending.unread > 0) return true;
    if (pending.openChildren === 0) return false;
  }
  return false;
}

/**
 * Why an agent stops when its signal aborts, as its end records it: what the abort reason
 * says of itself in `explanation` (a person stopped this one agent, colony found it hung), else
 * the run stopping.
 */
export function stoppedBecause(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  const explanation = typeof reason === 'object' && reason !== null ? (reason as { explanation?: unknown }).explanation : undefined;
  return stoppedReason(typeof explanation === 'string' ? explanation : 'the run was cancelled');
}
