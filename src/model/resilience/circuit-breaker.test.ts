import { describe, expect, it } from 'vitest';
import { createCircuitBreaker } from './circuit-breaker.js';
import { createManualClock } from '../testing/manual-clock.js';

function breakerWithClock() {
  const clock = createManualClock();
  const breaker = createCircuitBreaker({ failureThreshold: 3, coolDownMs: 30_000 }, clock.now);
  /** One call let through, ending as `outcome`. */
  const call = (outcome: 'fault' | 'answered' | 'none', reason = 'network: reset') => {
    const pass = breaker.pass();
    if (!pass.ok) throw new Error('expected the call to be let through');
    return breaker.record(outcome, pass.trial, reason);
  };
  return { clock, breaker, call };
}

describe('the circuit breaker', () => {
  it("opens after enough of the provider's failures in a row; any answer starts the count again", () => {
    const { clock, breaker, call } = breakerWithClock();
    expect(call('fault')).toBeNull();
    expect(call('fault')).toBeNull();
    // A 400 or a 429 is an answer: the provider is up.
    expect(call('answered')).toBeNull();
    expect(call('fault')).toBeNull();
    expect(call('fault')).toBeNull();
    expect(breaker.state()).toBe('closed');
    expect(call('fault', 'server: HTTP 502')).toEqual({
      type: 'opened',
      failures: 3,
      reason: 'server: HTTP 502',
      retryAt: clock.now() + 30_000,
    });
    expect(breaker.state()).toBe('open');
  });

  it('fails calls fast while open, saying why and when it tries again', () => {
    const { clock, breaker, call } = breakerWithClock();
    for (let failure = 0; failure < 3; failure += 1) call('fault', 'timeout: no answer');
    const refused = { ok: false, failures: 3, error: 'timeout: no answer', retryAt: clock.now() + 30_000 };
    expect(breaker.peek()).toEqual(refused);
    clock.advance(29_999);
    expect(breaker.pass()).toEqual(refused);
  });

  it('lets one trial call through after the cool-down, and closes when it succeeds', () => {
    const { clock, breaker, call } = breakerWithClock();
    for (let failure = 0; failure < 3; failure += 1) call('fault');
    clock.advance(30_000);
    expect(breaker.state()).toBe('half-open');
    expect(breaker.peek()).toEqual({ ok: true, trial: true });
    expect(breaker.pass()).toEqual({ ok: true, trial: true });
    // While the trial is under way, everyone else still fails fast, with no time to promise.
    expect(breaker.pass()).toMatchObject({ ok: false, retryAt: null });
    clock.advance(2_000);
    expect(breaker.record('answered', true, '')).toEqual({ type: 'closed', openMs: 32_000 });
    expect(breaker.state()).toBe('closed');
    expect(breaker.pass()).toEqual({ ok: true, trial: false });
  });

  it('opens again for another cool-down when the trial fails, and frees the trial when it is cancelled', () => {
    const { clock, breaker, call } = breakerWithClock();
    for (let failure = 0; failure < 3; failure += 1) call('fault');
    clock.advance(30_000);
    expect(call('none')).toBeNull();
    expect(breaker.state()).toBe('half-open');
    expect(call('fault', 'network: refused')).toEqual({ type: 'opened', failures: 4, reason: 'network: refused', retryAt: clock.now() + 30_000 });
    expect(breaker.peek()).toMatchObject({ ok: false });
    clock.advance(30_000);
    // The spell counts from the first opening.
    expect(call('answered')).toEqual({ type: 'closed', openMs: 60_000 });
  });

  it('ignores how calls that were under way when it opened end', () => {
    const { breaker, call } = breakerWithClock();
    const late = breaker.pass();
    for (let failure = 0; failure < 3; failure += 1) call('fault');
    expect(late).toEqual({ ok: true, trial: false });
    expect(breaker.record('answered', false, '')).toBeNull();
    expect(breaker.state()).toBe('open');
  });
});
