import type { ModelError, ProviderNotice } from '../chat-model.js';
import { createCircuitBreaker, type BreakerOutcome, type BreakerPass, type CircuitBreaker, type CircuitBreakerConfig } from './circuit-breaker.js';
import { abortedError, modelError } from '../model-error.js';
import { createProviderGate, type GateClock, type GateOutcome, type LimitChange, type ProviderGate, type ProviderGateConfig } from './provider-gate.js';

/** Whether one attempt may go to the provider: with the means to report how it went, or why not. */
export type Admission =
  | {
      readonly ok: true;
      /**
       * How the attempt ended (null: it succeeded) and whether the provider sent an HTTP
       * response of any status; returns what that changed, to tell the caller.
       */
      settle(error: ModelError | null, responded: boolean): ProviderNotice[];
    }
  | { readonly ok: false; readonly error: ModelError };

/** The concurrency gate and the circuit breaker of one provider at one address. */
export interface ProviderGuard {
  /** The provider and its address, as events and messages name it. */
  readonly provider: string;
  readonly gate: ProviderGate;
  readonly breaker: CircuitBreaker;
  /**
   * Fails fast when the circuit is open, else waits its turn at the gate (ending early, as
   * `aborted`, when `signal` aborts). Every admission must be settled exactly once.
   */
  admit(signal?: AbortSignal): Promise<Admission>;
  /** Whether any attempt has had an HTTP response from the provider, of any status, since the guard was made. */
  hasAnswered(): boolean;
  /** Whether any attempt has had a model's whole answer from the provider since the guard was made. */
  hasSucceeded(): boolean;
  /**
   * What a call that failed for good with `error` fails with: `error`, unless the provider has
   * never answered and `error` says it cannot be reached for now, or it has never once
   * succeeded and `error` is one more of its server errors (an overload aside). Then it is an
   * `unreachable` error naming the address, the last failure and what to check, since waiting
   * for a provider that was never there, or never worked, does not help: the address is most
   * likely wrong, or the server broken.
   */
  finalError(error: ModelError): ModelError;
}

export interface ProviderGuardConfig {
  readonly gate?: Partial<ProviderGateConfig>;
  readonly breaker?: Partial<CircuitBreakerConfig>;
}

/** The guards of every provider address a set of models talks to. */
export interface ProviderGuards {
  /** The one guard of `provider` at `baseUrl`, made on first use. */
  guardFor(provider: string, baseUrl: string): ProviderGuard;
}

export function createProviderGuards(config: ProviderGuardConfig = {}, clock: Partial<GateClock> = {}): ProviderGuards {
  const guards = new Map<string, ProviderGuard>();
  return {
    guardFor(provider, baseUrl) {
      const name = `${provider} at ${baseUrl}`;
      const existing = guards.get(name);
      if (existing !== undefined) return existing;
      const guard = createProviderGuard(name, config, clock);
      guards.set(name, guard);
      return guard;
    },
  };
}

/**
 * The guards models share when the caller brings none: one per provider address for the whole
 * process, because a provider's limits belong to the account and the address, not to a model
 * object, so every model of a run that talks to the same provider must slow down together.
 */
export const PROCESS_PROVIDER_GUARDS: ProviderGuards = createProviderGuards();

export function createProviderGuard(provider: string, config: ProviderGuardConfig = {}, clock: Partial<GateClock> = {}): ProviderGuard {
  const now = clock.now ?? Date.now;
  const gate = createProviderGate(config.gate, clock);
  const breaker = createCircuitBreaker(config.breaker, now);
  let answered = false;
  let succeeded = false;
  /** The last attempt that failed, named in the `unreachable` message. */
  let lastFailure: ModelError | null = null;

  const refusal = (pass: Extract<BreakerPass, { ok: false }>): Admission => ({ ok: false, error: circuitOpenError(provider, pass, now()) });

  async function admit(signal?: AbortSignal): Promise<Admission> {
    const early = breaker.peek();
    if (!early.ok) return refusal(early);
    const permit = await gate.acquire(signal);
    if (permit === null) return { ok: false, error: abortedError() };
    const pass = breaker.pass();
    if (!pass.ok) {
      permit.release({ kind: 'neutral' });
      return refusal(pass);
    }
    return {
      ok: true,
      settle(error, responded) {
        if (responded || error === null) answered = true;
        if (error === null) succeeded = true;
        if (error !== null && error.kind !== 'aborted') lastFailure = error;
        const notices: ProviderNotice[] = [];
        const limitChange = permit.release(gateOutcome(error));
        if (limitChange !== null) notices.push(limitNotice(provider, limitChange));
        const breakerChange = breaker.record(breakerOutcome(error), pass.trial, error === null ? '' : `${error.kind}: ${error.message}`);
        if (breakerChange?.type === 'opened') {
          notices.push({
            type: 'circuit-opened',
            provider,
            failures: breakerChange.failures,
            reason: breakerChange.reason,
            retryInMs: Math.max(0, breakerChange.retryAt - now()),
          });
        }
        if (breakerChange?.type === 'closed') notices.push({ type: 'circuit-closed', provider, openMs: breakerChange.openMs });
        return notices;
      },
    };
  }

  function finalError(error: ModelError): ModelError {
    // An open circuit says only that earlier attempts failed; the failure that opened it says why.
    const last = error.kind === 'circuit-open' && lastFailure !== null ? lastFailure : error;
    const lastError = `The last error: ${last.kind}: ${last.message.replace(/\.$/, '')}.`;
    if (!answered && NO_ANSWER_KINDS.has(error.kind)) {
      return modelError(
        'unreachable',
        `${provider} has not answered once since this run started: no HTTP response of any status came back. ${lastError} ` +
          'Check that --base-url is the address of the server (with its path, such as /v1), ' +
          'that the network from this machine reaches it, and that the server is running.',
        null,
        false,
      );
    }
    if (!succeeded && (error.kind === 'server' || error.kind === 'circuit-open') && isServerFailure(last)) {
      return modelError(
        'unreachable',
        `${provider} has answered every call since this run started with a server error, not once with a model's answer. ${lastError} ` +
          'Check that --base-url is the address of the model API (with its path, such as /v1) ' +
          "and look in the server's logs for why it fails; colony does not wait for a server that has never worked.",
        last.status,
        false,
      );
    }
    return error;
  }

  return { provider, gate, breaker, admit, hasAnswered: () => answered, hasSucceeded: () => succeeded, finalError };
}

/**
 * The failures that leave the provider unavailable for now without an answer from it. Rate
 * limits and 5xx are answers; while nothing has answered, the circuit can only have opened on
 * these, so an open circuit is one of them too.
 */
const NO_ANSWER_KINDS: ReadonlySet<ModelError['kind']> = new Set(['network', 'timeout', 'stall', 'circuit-open']);

/**
 * A server error that is not the server saying it is busy: an overload, or a 503, which servers
 * answer while they start (llama.cpp's while it loads the model), are worth waiting for.
 */
function isServerFailure(error: ModelError): boolean {
  return error.kind === 'server' && error.status !== 503 && !isOverload(error);
}

/** A rate limit, or a provider saying it is overloaded: 529, or 503 with a retry-after. */
export function isOverload(error: ModelError): boolean {
  if (error.kind === 'rate-limit') return true;
  if (error.kind !== 'server') return false;
  return error.status === 529 || (error.status === 503 && error.retryAfterMs !== null) || /overloaded/i.test(error.message);
}

/** Failures that are the provider's, not the request's: what the circuit breaker counts. */
export function isProviderFault(error: ModelError): boolean {
  return error.kind === 'network' || error.kind === 'server' || error.kind === 'timeout' || error.kind === 'stall' || error.kind === 'garbage';
}

function gateOutcome(error: ModelError | null): GateOutcome {
  if (error === null) return { kind: 'success' };
  if (error.kind === 'aborted') return { kind: 'neutral' };
  if (isOverload(error)) return { kind: 'overload', reason: overloadReason(error), retryAfterMs: error.retryAfterMs };
  return { kind: 'failure', retryAfterMs: error.retryAfterMs };
}

function breakerOutcome(error: ModelError | null): BreakerOutcome {
  if (error === null) return 'answered';
  if (error.kind === 'aborted') return 'none';
  return isProviderFault(error) ? 'fault' : 'answered';
}

function overloadReason(error: ModelError): string {
  const status = error.status === null ? '' : ` (HTTP ${error.status})`;
  return error.kind === 'rate-limit' ? `rate limited${status}` : `overloaded${status}`;
}

function limitNotice(provider: string, change: LimitChange): ProviderNotice {
  return { type: 'limited', provider, from: change.from, to: change.to, reason: change.reason, holdMs: change.holdMs };
}

function circuitOpenError(provider: string, pass: Extract<BreakerPass, { ok: false }>, now: number): ModelError {
  const why = `${pass.failures} failure(s) in a row, the last: ${pass.error}`;
  if (pass.retryAt === null) {
    return modelError(
      'circuit-open',
      `${provider} is failing (${why}); one trial call is under way, and no other call goes to it until that one succeeds.`,
      null,
      true,
    );
  }
  const waitMs = Math.max(0, pass.retryAt - now);
  return modelError(
    'circuit-open',
    `colony stopped calling ${provider} after ${why}; it will try again at ${new Date(pass.retryAt).toISOString()} ` +
      `(in ${Math.ceil(waitMs / 1000)} s).`,
    null,
    true,
    waitMs,
  );
}
