import { abortableSleep, type Sleep } from './abortable-sleep.js';

/** How a provider's concurrency gate behaves. Every field has a default; see DEFAULT_PROVIDER_GATE_CONFIG. */
export interface ProviderGateConfig {
  /** Calls let through at once before the provider has said anything about its load. */
  readonly initialLimit: number;
  /** The limit never grows past this. */
  readonly maxLimit: number;
  /** The longest a provider's retry-after may hold the whole gate shut. */
  readonly maxHoldMs: number;
}

export const DEFAULT_PROVIDER_GATE_CONFIG: ProviderGateConfig = {
  initialLimit: 32,
  maxLimit: 256,
  maxHoldMs: 600_000,
};

/** What a finished call tells the gate. */
export type GateOutcome =
  | { readonly kind: 'success' }
  /** A rate limit or an overload: the provider wants fewer calls. */
  | { readonly kind: 'overload'; readonly reason: string; readonly retryAfterMs: number | null }
  /** Any other failure: it breaks a run of successes, and a retry-after still holds the gate. */
  | { readonly kind: 'failure'; readonly retryAfterMs: number | null }
  /** The call said nothing about the provider (it was cancelled, or never sent). */
  | { readonly kind: 'neutral' };

/** The gate's limit moved. */
export interface LimitChange {
  readonly from: number;
  readonly to: number;
  readonly reason: string;
  /** How long the provider's retry-after holds the whole gate shut from now, when it asked. */
  readonly holdMs: number | null;
}

/** One admitted call's slot. */
export interface GatePermit {
  /** Gives the slot back and tells the gate how the call went; only the first release counts. */
  release(outcome: GateOutcome): LimitChange | null;
}

export interface GateState {
  readonly limit: number;
  readonly inFlight: number;
  readonly waiting: number;
  /** Milliseconds the gate stays shut for a retry-after; 0 when it is open. */
  readonly heldForMs: number;
}

export interface ProviderGate {
  /**
   * Waits for a slot, first come first served, and takes it. Resolves null, without a slot,
   * when `signal` aborts first.
   */
  acquire(signal?: AbortSignal): Promise<GatePermit | null>;
  state(): GateState;
}

export interface GateClock {
  /** Milliseconds, for retry-after holds. */
  readonly now: () => number;
  /** Waits out a hold; must settle early when its signal aborts. */
  readonly sleep: Sleep;
}

interface Waiter {
  readonly grant: (permit: GatePermit) => void;
  readonly detach: () => void;
}

/**
 * An adaptive concurrency limit for one provider (AIMD): at most `limit` calls at once; a
 * rate limit or overload halves the limit (not below 1), and every `limit` successes in a row
 * raise it by one (not above `maxLimit`), so the gate settles just under what the provider
 * accepts. Calls over the limit wait in FIFO order. A retry-after holds the whole gate shut
 * until it passes, since the provider asked everyone, not only the caller, to wait.
 *
 * One overload wave halves the limit once: an overload from a call admitted before the last
 * halving is the same congestion already reacted to.
 */
export function createProviderGate(config: Partial<ProviderGateConfig> = {}, clock: Partial<GateClock> = {}): ProviderGate {
  const settings = { ...DEFAULT_PROVIDER_GATE_CONFIG, ...config };
  if (!(settings.initialLimit >= 1 && settings.maxLimit >= settings.initialLimit)) {
    throw new Error(`invalid gate limits: initial ${settings.initialLimit}, max ${settings.maxLimit}`);
  }
  const now = clock.now ?? Date.now;
  const sleep = clock.sleep ?? abortableSleep;
  let limit = Math.floor(settings.initialLimit);
  let inFlight = 0;
  let successesInARow = 0;
  /** Bumped by every halving; a permit remembers the one it was admitted in. */
  let epoch = 0;
  let heldUntil = 0;
  const queue: Waiter[] = [];
  let wakeup: AbortController | null = null;

  const held = (): boolean => now() < heldUntil;

  function admit(): GatePermit {
    inFlight += 1;
    const admittedIn = epoch;
    let released = false;
    return {
      release(outcome) {
        if (released) return null;
        released = true;
        inFlight -= 1;
        const change = adjust(outcome, admittedIn);
        grantWaiting();
        return change;
      },
    };
  }

  function adjust(outcome: GateOutcome, admittedIn: number): LimitChange | null {
    if (outcome.kind === 'neutral') return null;
    if (outcome.kind === 'success') {
      successesInARow += 1;
      if (successesInARow < limit || limit >= settings.maxLimit) return null;
      successesInARow = 0;
      limit += 1;
      return { from: limit - 1, to: limit, reason: `${limit - 1} calls in a row succeeded`, holdMs: null };
    }
    successesInARow = 0;
    const holdMs = outcome.retryAfterMs === null ? null : Math.min(Math.max(0, outcome.retryAfterMs), settings.maxHoldMs);
    if (holdMs !== null) heldUntil = Math.max(heldUntil, now() + holdMs);
    if (outcome.kind === 'failure' || admittedIn !== epoch) return null;
    epoch += 1;
    const from = limit;
    limit = Math.max(1, Math.floor(limit / 2));
    return from === limit ? null : { from, to: limit, reason: outcome.reason, holdMs };
  }

  function grantWaiting(): void {
    while (queue.length > 0 && inFlight < limit && !held()) {
      const waiter = queue.shift();
      if (waiter === undefined) break;
      waiter.detach();
      waiter.grant(admit());
    }
    scheduleWakeup();
  }

  /** While callers wait out a hold, one timer reopens the gate when it passes. Called by grantWaiting only. */
  function scheduleWakeup(): void {
    if (queue.length === 0 || !held()) {
      wakeup?.abort();
      wakeup = null;
      return;
    }
    if (wakeup !== null) return;
    const controller = new AbortController();
    wakeup = controller;
    const reopen = (): void => {
      if (wakeup !== controller) return;
      wakeup = null;
      grantWaiting();
    };
    sleep(Math.max(0, heldUntil - now()), controller.signal).then(reopen, reopen);
  }

  function acquire(signal?: AbortSignal): Promise<GatePermit | null> {
    if (signal?.aborted === true) return Promise.resolve(null);
    if (queue.length === 0 && inFlight < limit && !held()) return Promise.resolve(admit());
    return new Promise((resolve) => {
      const leave = (): void => {
        const position = queue.indexOf(waiter);
        if (position !== -1) queue.splice(position, 1);
        resolve(null);
        grantWaiting();
      };
      const waiter: Waiter = {
        grant: resolve,
        detach: () => signal?.removeEventListener('abort', leave),
      };
      signal?.addEventListener('abort', leave, { once: true });
      queue.push(waiter);
      // A hold that just passed may not have been acted on yet: whoever is first goes now.
      grantWaiting();
    });
  }

  return {
    acquire,
    state: () => ({ limit, inFlight, waiting: queue.length, heldForMs: Math.max(0, heldUntil - now()) }),
  };
}
