import type { EventBody } from '../events/event-types.js';
import { abortableSleep, type Sleep } from '../model/resilience/abortable-sleep.js';
import type { ChatModel, ModelRequest, ModelResult, ProviderNotice } from '../model/chat-model.js';
import { conversationLength } from '../model/messages.js';
import { abortedError, isProviderUnavailable } from '../model/model-error.js';
import type { AgentRecorder } from './types.js';

/** How long a parked agent waits before it calls the model again. */
export interface ParkingPolicy {
  /** The first wait; each further one in a row, for the same step, doubles. */
  readonly firstDelayMs: number;
  /** No wait is longer than this, whatever a retry-after or an open circuit asks. */
  readonly maxDelayMs: number;
}

export const DEFAULT_PARKING_POLICY: ParkingPolicy = {
  firstDelayMs: 10_000,
  maxDelayMs: 300_000,
};

export interface ParkingOptions extends Partial<ParkingPolicy> {
  /** Waits out a park; must settle early when its signal aborts. */
  readonly sleep?: Sleep;
  /** A number in [0, 1), for the jitter that keeps parked agents from waking all at once. */
  readonly random?: () => number;
}

/**
 * The wait before the call after park number `parks` (0 for the first) of a step: half its
 * ceiling plus jitter, the ceiling `firstDelayMs * 2^parks` capped at `maxDelayMs`. The
 * provider's retry-after, or the time until an open circuit's trial, is a floor, itself
 * capped: the provider's gate holds calls back for a retry-after anyway.
 */
export function parkingDelayMs(policy: ParkingPolicy, parks: number, random: () => number, retryAfterMs: number | null): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** parks);
  const jittered = Math.round(ceiling / 2 + (random() * ceiling) / 2);
  return Math.min(policy.maxDelayMs, Math.max(jittered, retryAfterMs ?? 0));
}

export interface StepCall {
  readonly model: ChatModel;
  readonly request: ModelRequest;
  readonly step: number;
  readonly signal: AbortSignal;
  readonly recorder: AgentRecorder;
  readonly parking?: ParkingOptions;
  /** Asked after each park: a reason ends the park, and the agent, instead of calling again. */
  readonly stopWaiting?: () => string | null;
}

export interface StepCallResult {
  readonly result: ModelResult;
  /** How long the last request took, parks not included. */
  readonly durationMs: number;
  /** Why the agent stopped waiting for its provider (see `StepCall.stopWaiting`); absent otherwise. */
  readonly stopped?: string;
}

/**
 * One step's model call, recorded: `model.requested`, each retry, each change it caused to its
 * provider's gate or circuit, and `model.failed` when it fails for good. A call that fails
 * because the provider is unavailable parks the agent instead of failing it: `agent.parked`,
 * a wait, `agent.unparked`, and the same request again, as often as it takes. The signal ends
 * a park, and so does `stopWaiting` (the run's time or budget used up meanwhile); the caller's
 * step count is untouched by it.
 */
export async function callModelForStep(call: StepCall): Promise<StepCallResult> {
  const { model, request, step, signal, recorder } = call;
  const policy: ParkingPolicy = { ...DEFAULT_PARKING_POLICY, ...definedPolicy(call.parking) };
  const sleep = call.parking?.sleep ?? abortableSleep;
  const random = call.parking?.random ?? Math.random;
  for (let parks = 0; ; parks += 1) {
    recorder.record({
      type: 'model.requested',
      data: {
        step,
        model: model.spec,
        messages: request.messages.length,
        chars: conversationLength(request.messages),
        ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
      },
    });
    const started = performance.now();
    const result = await model.call(request, {
      signal,
      onRetry: (notice) =>
        recorder.record({
          type: 'model.retried',
          data: {
            step,
            attempt: notice.attempt,
            kind: notice.error.kind,
            message: notice.error.message,
            status: notice.error.status,
            delayMs: notice.delayMs,
          },
        }),
      onProvider: (notice) => recorder.record(providerEvent(notice)),
    });
    const durationMs = Math.round(performance.now() - started);
    if (result.ok || signal.aborted || !isProviderUnavailable(result.error)) {
      if (!result.ok) {
        const { error } = result;
        recorder.record({ type: 'model.failed', data: { step, kind: error.kind, message: error.message, attempts: result.attempts } });
      }
      return { result, durationMs };
    }
    const { error } = result;
    const waitMs = parkingDelayMs(policy, parks, random, error.retryAfterMs);
    recorder.record({ type: 'agent.parked', data: { step, kind: error.kind, message: error.message, attempts: result.attempts, waitMs } });
    // A park can last minutes: what led to it is made durable first.
    await recorder.flush();
    const parkedAt = performance.now();
    try {
      await sleep(waitMs, signal);
    } catch {
      // A sleep that rejects on abort is allowed; the check below reports it.
    }
    if (signal.aborted) return { result: { ok: false, error: abortedError(), attempts: 0 }, durationMs: 0 };
    const stopped = call.stopWaiting?.() ?? null;
    if (stopped !== null) return { result: { ok: false, error, attempts: result.attempts }, durationMs: 0, stopped };
    recorder.record({ type: 'agent.unparked', data: { step, parkedMs: Math.round(performance.now() - parkedAt) } });
  }
}

function definedPolicy(options: ParkingOptions | undefined): Partial<ParkingPolicy> {
  if (options === undefined) return {};
  return {
    ...(options.firstDelayMs === undefined ? {} : { firstDelayMs: options.firstDelayMs }),
    ...(options.maxDelayMs === undefined ? {} : { maxDelayMs: options.maxDelayMs }),
  };
}

function providerEvent(notice: ProviderNotice): EventBody {
  switch (notice.type) {
    case 'limited':
      return {
        type: 'provider.limited',
        data: { provider: notice.provider, from: notice.from, to: notice.to, reason: notice.reason, holdMs: notice.holdMs },
      };
    case 'circuit-opened':
      return {
        type: 'provider.circuit-opened',
        data: { provider: notice.provider, failures: notice.failures, reason: notice.reason, retryInMs: notice.retryInMs },
      };
    case 'circuit-closed':
      return { type: 'provider.circuit-closed', data: { provider: notice.provider, openMs: notice.openMs } };
  }
}
