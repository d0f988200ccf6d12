/** How a provider's circuit breaker behaves. See DEFAULT_CIRCUIT_BREAKER_CONFIG. */
export interface CircuitBreakerConfig {
  /** Failures in a row that are the provider's fault before the circuit opens. */
  readonly failureThreshold: number;
  /** How long an open circuit fails calls fast before it lets one trial call through. */
  readonly coolDownMs: number;
}

export const DEFAULT_CIRCUIT_BREAKER_CONFIG: CircuitBreakerConfig = {
  failureThreshold: 5,
  coolDownMs: 30_000,
};

/**
 * How a call ended, as the breaker counts it: `fault` when the provider failed (no answer, a
 * 5xx, a timeout, an unreadable answer), `answered` when it answered at all (a 4xx or a rate
 * limit says it is up), `none` when the call says nothing (it was cancelled).
 */
export type BreakerOutcome = 'fault' | 'answered' | 'none';

/** Whether a call may go to the provider now. */
export type BreakerPass =
  | { readonly ok: true; readonly trial: boolean }
  | {
      readonly ok: false;
      readonly failures: number;
      /** The last failure before the circuit opened. */
      readonly error: string;
      /** When a trial call will be let through; null while one is under way. */
      readonly retryAt: number | null;
    };

export type BreakerChange =
  | { readonly type: 'opened'; readonly failures: number; readonly reason: string; readonly retryAt: number }
  | { readonly type: 'closed'; readonly openMs: number };

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitBreaker {
  /** What `pass` would answer, without taking the trial call: to fail fast before queueing. */
  peek(): BreakerPass;
  /** Lets a call through, or not; in half-open state the first caller gets the one trial. */
  pass(): BreakerPass;
  /** How a call that `pass` let through ended; `trial` is what `pass` said. */
  record(outcome: BreakerOutcome, trial: boolean, reason: string): BreakerChange | null;
  state(): CircuitState;
}

type State =
  | { readonly name: 'closed'; readonly failures: number }
  | {
      readonly name: 'open' | 'half-open';
      readonly failures: number;
      readonly reason: string;
      /** When this spell of not being closed began. */
      readonly openedAt: number;
      readonly retryAt: number;
      readonly trialUnderWay: boolean;
    };

/**
 * A circuit breaker for one provider. Closed, it counts the provider's failures in a row;
 * at `failureThreshold` it opens, and calls fail fast for `coolDownMs`. Then it is half-open:
 * one trial call goes through while the others still fail fast. The trial's success closes
 * it; its failure opens it for another cool-down.
 */
export function createCircuitBreaker(config: Partial<CircuitBreakerConfig> = {}, now: () => number = Date.now): CircuitBreaker {
  const settings = { ...DEFAULT_CIRCUIT_BREAKER_CONFIG, ...config };
  let state: State = { name: 'closed', failures: 0 };

  function open(failures: number, reason: string, openedAt: number): BreakerChange {
    const retryAt = now() + settings.coolDownMs;
    state = { name: 'open', failures, reason, openedAt, retryAt, trialUnderWay: false };
    return { type: 'opened', failures, reason, retryAt };
  }

  function current(): State {
    if (state.name === 'open' && now() >= state.retryAt) state = { ...state, name: 'half-open' };
    return state;
  }

  function peek(): BreakerPass {
    const seen = current();
    if (seen.name === 'closed') return { ok: true, trial: false };
    if (seen.name === 'half-open' && !seen.trialUnderWay) return { ok: true, trial: true };
    return { ok: false, failures: seen.failures, error: seen.reason, retryAt: seen.trialUnderWay ? null : seen.retryAt };
  }

  function pass(): BreakerPass {
    const answer = peek();
    if (answer.ok && answer.trial && state.name === 'half-open') state = { ...state, trialUnderWay: true };
    return answer;
  }

  function record(outcome: BreakerOutcome, trial: boolean, reason: string): BreakerChange | null {
    const seen = current();
    if (seen.name === 'closed') {
      if (outcome === 'answered') state = { name: 'closed', failures: 0 };
      if (outcome !== 'fault') return null;
      const failures = seen.failures + 1;
      if (failures < settings.failureThreshold) {
        state = { name: 'closed', failures };
        return null;
      }
      return open(failures, reason, now());
    }
    // Calls that were already under way when the circuit opened say nothing new.
    if (!trial) return null;
    if (outcome === 'fault') return open(seen.failures + 1, reason, seen.openedAt);
    if (outcome === 'none') {
      state = { ...seen, trialUnderWay: false };
      return null;
    }
    state = { name: 'closed', failures: 0 };
    return { type: 'closed', openMs: now() - seen.openedAt };
  }

  return { peek, pass, record, state: () => current().name };
}
