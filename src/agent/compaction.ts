import type { ChatModel, ToolSpec } from '../model/chat-model.js';
import type { Message } from '../model/messages.js';
import type { AgentRecorder } from './types.js';
import { compactedMessages, OPENING_MESSAGES, SHRUNK_OUTPUT_CHARS, shrinkOldToolOutputs, turnBoundary, unansweredStart, type TokenEstimator } from './context-size.js';
import { callModelForStep, type ParkingOptions } from './model-call.js';
import { SUMMARY_OPENING as SUMMARY_FIRST_WORDS } from '../protocol/message-openings.js';

/** How the loop keeps a conversation inside its model's context window. */
export interface ContextPolicy {
  /** Tokens the model takes in one request: its input and the output it asks for, together. */
  readonly windowTokens: number;
  /**
   * The most output tokens one answer may have (the model's output limit). Each call asks for
   * it, or for what the window leaves after the input when that is less (see `outputAllowance`).
   */
  readonly outputTokens: number;
  /** Share of the window (0..1) above which the conversation is made smaller before the call. */
  readonly threshold: number;
  /** false: the conversation is never cut, and a provider may refuse a request that outgrew its window. */
  readonly compaction: boolean;
  /** The request for a summary (the compaction prompt); the latest scratchpad is appended to it. */
  readonly compactionPrompt: string;
  /** Answers kept as they are after a summary, with their tool results. */
  readonly keptTurns: number;
}

/** How a summary opens in the conversation that continues from it. */
export const SUMMARY_OPENING = `${SUMMARY_FIRST_WORDS}, written by you when it neared the context window (the full history is in the run's log):`;

export interface CompactionStep {
  readonly model: ChatModel;
  /** The agent's tools: described in the summary request (its history calls them), with no call allowed. */
  readonly tools: readonly ToolSpec[];
  readonly policy: ContextPolicy;
  readonly estimator: TokenEstimator;
  readonly step: number;
  readonly signal: AbortSignal;
  readonly recorder: AgentRecorder;
  readonly parking?: ParkingOptions;
  readonly stopWaiting?: () => string | null;
  /** The latest scratchpad, or null: it goes with the summary request, and after every request. */
  readonly scratchpad: string | null;
  /** Characters sent with every request besides the messages (the scratchpad's message). */
  readonly extraChars: number;
  /**
   * After a summary failed at this many tokens, no summary is asked for again until the
   * conversation grows past it by a twentieth, or past the window: a provider that cannot
   * summarise now is not asked at every step.
   */
  readonly lastFailedAt: number | null;
}

/**
 * What became of the conversation: it fits (perhaps made smaller; `failedAt` set when a summary
 * was asked for and could not be had) and its answer may have `outputTokens`, or it cannot be
 * made to fit.
 */
export type Fitted =
  | { readonly ok: true; readonly failedAt?: number; readonly outputTokens?: number }
  | { readonly ok: false; readonly error: string };

/**
 * Output tokens a request always leaves free in the window for its answer: a tenth of the
 * window, at most the output limit. Providers refuse a request whose input and asked output
 * together exceed the window, so the conversation is kept below the window by this much.
 */
export function outputReserve(policy: ContextPolicy): number {
  return Math.min(policy.outputTokens, Math.floor(policy.windowTokens / 10));
}

/**
 * The output tokens a request of `inputTokens` asks for: the output limit, or what the window
 * has left after the input when that is less, and never less than the reserve (a request that
 * leaves less is over the window anyway, and the provider says so).
 */
export function outputAllowance(policy: ContextPolicy, inputTokens: number): number {
  return Math.max(outputReserve(policy), Math.min(policy.outputTokens, policy.windowTokens - inputTokens));
}

/** Input tokens above which the conversation is made smaller: the threshold's share of the window, and never into the output reserve. */
function compactionLimit(policy: ContextPolicy): number {
  return Math.min(Math.floor(policy.windowTokens * policy.threshold), policy.windowTokens - outputReserve(policy));
}

/**
 * Makes `messages` fit under the policy's threshold before the next model call, in place:
 * first the tool outputs of older turns are shrunk, then, if that is not enough, everything
 * between the task and the last few turns is replaced by a summary the model writes. Each cut
 * is recorded (`context.shrunk`, `context.compacted`) so a rebuild makes the same one. A
 * summary that cannot be had is recorded as `context.compaction-failed`; the agent goes on
 * while the request still fits the window with the output reserve, and stops when it does not.
 * What fits is told the output its answer may have (`outputAllowance`).
 */
export async function fitToWindow(messages: Message[], step: CompactionStep): Promise<Fitted> {
  const { policy, estimator, recorder } = step;
  const limit = compactionLimit(policy);
  const room = policy.windowTokens - outputReserve(policy);
  const fits = (failedAt?: number): Fitted => ({
    ok: true,
    outputTokens: outputAllowance(policy, estimator.estimate(messages, step.extraChars)),
    ...(failedAt === undefined ? {} : { failedAt }),
  });
  const before = estimator.estimate(messages, step.extraChars);
  if (!policy.compaction || before <= limit) return fits();

  const outputs = shrinkOldToolOutputs(messages, policy.keptTurns, SHRUNK_OUTPUT_CHARS);
  const shrunk = estimator.estimate(messages, step.extraChars);
  if (outputs > 0) {
    recorder.record({
      type: 'context.shrunk',
      data: { step: step.step, keptTurns: policy.keptTurns, maxChars: SHRUNK_OUTPUT_CHARS, outputs, beforeTokens: before, afterTokens: shrunk },
    });
  }
  if (shrunk <= limit) return fits();
  const recentlyFailed = step.lastFailedAt !== null && shrunk <= step.lastFailedAt * 1.05 && shrunk <= room;
  if (recentlyFailed) return fits(step.lastFailedAt ?? shrunk);

  const summarised = await summarise(messages, step, shrunk);
  const after = estimator.estimate(messages, step.extraChars);
  if (after <= room) return summarised === null ? fits() : fits(shrunk);
  const reason = summarised ?? `the last ${policy.keptTurns} turns alone are too large`;
  return {
    ok: false,
    error:
      `the conversation does not fit the model's context window (${after} tokens of ${policy.windowTokens}, ` +
      `${policy.windowTokens - room} of them kept for the answer) and compaction could not make it fit: ${reason}`,
  };
}

/** Room left for the summary itself when choosing how many turns to keep: a tenth of the window, at most 4,000 tokens. */
function summaryAllowance(windowTokens: number): number {
  return Math.min(4_000, Math.floor(windowTokens / 10));
}

/**
 * Where the part to summarise ends: at the start of the most recent turns kept (at most
 * `keptTurns` of them), keeping as many as leave the conversation under the threshold once
 * summarised, else the fewest; always leaving something to summarise. OPENING_MESSAGES when
 * there is nothing.
 */
function summaryCut(messages: readonly Message[], step: CompactionStep): number {
  const { policy, estimator } = step;
  const room = compactionLimit(policy) - summaryAllowance(policy.windowTokens);
  let fallback = OPENING_MESSAGES;
  const opening = messages.slice(0, OPENING_MESSAGES);
  // Messages the agent has not answered yet stay word for word, whatever else is summarised.
  const unanswered = unansweredStart(messages);
  for (let kept = policy.keptTurns; kept >= 0; kept -= 1) {
    const cut = Math.max(OPENING_MESSAGES, Math.min(turnBoundary(messages, kept), unanswered));
    if (cut <= OPENING_MESSAGES) continue;
    // Kept turns are given up from the oldest: the last cut tried keeps the fewest.
    fallback = cut;
    if (estimator.estimate([...opening, ...messages.slice(cut)], step.extraChars) <= room) return cut;
  }
  return fallback;
}

/**
 * Replaces the older part of the conversation with the model's summary of it. Returns null
 * when it did, or why it did not. Fewer turns are kept when keeping them all would leave the
 * conversation over the threshold, or nothing to summarise.
 */
async function summarise(messages: Message[], step: CompactionStep, tokens: number): Promise<string | null> {
  const { policy, recorder } = step;
  const cut = summaryCut(messages, step);
  if (cut <= OPENING_MESSAGES) return failed(step, tokens, 'there is nothing between the task and the last turn to summarise');

  const prompt = step.scratchpad === null ? policy.compactionPrompt : `${policy.compactionPrompt}\n\nYour latest scratchpad:\n${step.scratchpad}`;
  const request: Message[] = [...messages.slice(0, cut), { role: 'user', content: prompt }];
  // The summary request must fit the window too, with room for the summary: its every tool
  // output is shrunk when it would not (the conversation itself keeps its recent ones whole).
  if (step.estimator.estimate(request, 0) > policy.windowTokens - outputReserve(policy)) shrinkOldToolOutputs(request, 0, SHRUNK_OUTPUT_CHARS);
  const started = performance.now();
  const { result, stopped } = await callModelForStep({
    model: step.model,
    request: { messages: request, tools: step.tools, toolChoice: 'none', maxOutputTokens: outputAllowance(policy, step.estimator.estimate(request, 0)) },
    step: step.step,
    signal: step.signal,
    recorder,
    ...(step.parking === undefined ? {} : { parking: step.parking }),
    ...(step.stopWaiting === undefined ? {} : { stopWaiting: step.stopWaiting }),
  });
  if (stopped !== undefined) return failed(step, tokens, stopped);
  if (!result.ok) return failed(step, tokens, `the summary call failed: ${result.error.kind}: ${result.error.message}`);
  const text = result.turn.text.trim();
  if (text === '') return failed(step, tokens, 'the model answered the summary request without any text');

  const summary = `${SUMMARY_OPENING}\n\n${text}`;
  const kept = messages.length - cut;
  const replaced = cut - OPENING_MESSAGES;
  messages.splice(0, messages.length, ...compactedMessages(messages, summary, kept));
  recorder.record({
    type: 'context.compacted',
    data: {
      step: step.step,
      model: step.model.spec,
      windowTokens: policy.windowTokens,
      beforeTokens: tokens,
      afterTokens: step.estimator.estimate(messages, step.extraChars),
      replaced,
      kept,
      summary,
      usage: result.turn.usage,
      costUsd: result.turn.costUsd,
      durationMs: Math.round(performance.now() - started),
    },
  });
  return null;
}

function failed(step: CompactionStep, tokens: number, reason: string): string {
  step.recorder.record({ type: 'context.compaction-failed', data: { step: step.step, reason, tokens, windowTokens: step.policy.windowTokens } });
  return reason;
}
