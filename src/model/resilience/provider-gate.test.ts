import { describe, expect, it } from 'vitest';
import { createManualClock, settle } from '../testing/manual-clock.js';
import { createProviderGate, type GatePermit, type ProviderGate } from './provider-gate.js';

const OVERLOAD = { kind: 'overload', reason: 'rate limited (HTTP 429)', retryAfterMs: null } as const;

/** Takes `count` slots that are free now. */
async function take(gate: ProviderGate, count: number): Promise<GatePermit[]> {
  const permits: GatePermit[] = [];
  for (let index = 0; index < count; index += 1) {
    const permit = await gate.acquire();
    if (permit === null) throw new Error('expected a slot');
    permits.push(permit);
  }
  return permits;
}

/** Asks for a slot and notes, under `name`, when it is granted. */
function queueUp(gate: ProviderGate, name: string, granted: string[], signal?: AbortSignal): Promise<GatePermit | null> {
  return gate.acquire(signal).then((permit) => {
    if (permit !== null) granted.push(name);
    return permit;
  });
}

describe('the provider gate', () => {
  it('lets `limit` calls through at once; the rest wait and go in the order they came', async () => {
    const gate = createProviderGate({ initialLimit: 2 });
    const [first, second] = await take(gate, 2);
    const granted: string[] = [];
    const waiting = ['c', 'd', 'e'].map((name) => queueUp(gate, name, granted));
    await settle();
    expect(granted).toEqual([]);
    expect(gate.state()).toMatchObject({ limit: 2, inFlight: 2, waiting: 3 });
    // Neutral outcomes, so no run of successes raises the limit meanwhile.
    first?.release({ kind: 'neutral' });
    await settle();
    expect(granted).toEqual(['c']);
    second?.release({ kind: 'neutral' });
    const third = await waiting[1];
    await settle();
    expect(granted).toEqual(['c', 'd']);
    third?.release({ kind: 'neutral' });
    await waiting[2];
    expect(granted).toEqual(['c', 'd', 'e']);
  });

  it('halves the limit on an overload, once per wave of calls, never below 1', async () => {
    const gate = createProviderGate({ initialLimit: 8 });
    const wave = await take(gate, 8);
    expect(wave[0]?.release(OVERLOAD)).toEqual({ from: 8, to: 4, reason: 'rate limited (HTTP 429)', holdMs: null });
    // Admitted before the halving: the same congestion, already answered.
    expect(wave[1]?.release(OVERLOAD)).toBeNull();
    expect(gate.state().limit).toBe(4);
    for (const permit of wave.slice(2)) permit.release({ kind: 'neutral' });
    const [next] = await take(gate, 1);
    expect(next?.release(OVERLOAD)).toMatchObject({ from: 4, to: 2 });
    const [again] = await take(gate, 1);
    expect(again?.release(OVERLOAD)).toMatchObject({ from: 2, to: 1 });
    const [last] = await take(gate, 1);
    expect(last?.release(OVERLOAD)).toBeNull();
    expect(gate.state().limit).toBe(1);
  });

  it('creeps back up by one after a window of successes in a row, not above its maximum', async () => {
    const gate = createProviderGate({ initialLimit: 4, maxLimit: 4 });
    const [overloaded] = await take(gate, 1);
    overloaded?.release(OVERLOAD);
    expect(gate.state().limit).toBe(2);
    const changes = [];
    for (let call = 0; call < 2; call += 1) changes.push((await take(gate, 1))[0]?.release({ kind: 'success' }));
    expect(changes).toEqual([null, { from: 2, to: 3, reason: '2 calls in a row succeeded', holdMs: null }]);
    // A failure breaks the run: three more successes are needed after it.
    (await take(gate, 1))[0]?.release({ kind: 'success' });
    (await take(gate, 1))[0]?.release({ kind: 'failure', retryAfterMs: null });
    for (let call = 0; call < 2; call += 1) expect((await take(gate, 1))[0]?.release({ kind: 'success' })).toBeNull();
    expect((await take(gate, 1))[0]?.release({ kind: 'success' })).toMatchObject({ from: 3, to: 4 });
    for (let call = 0; call < 10; call += 1) expect((await take(gate, 1))[0]?.release({ kind: 'success' })).toBeNull();
    expect(gate.state().limit).toBe(4);
  });

  it('lets a waiter that gives up leave the line, and the next one moves up', async () => {
    const gate = createProviderGate({ initialLimit: 1 });
    const [held] = await take(gate, 1);
    const granted: string[] = [];
    const leaving = new AbortController();
    const first = queueUp(gate, 'first', granted, leaving.signal);
    const second = queueUp(gate, 'second', granted);
    leaving.abort();
    expect(await first).toBeNull();
    expect(gate.state().waiting).toBe(1);
    held?.release({ kind: 'success' });
    await second;
    expect(granted).toEqual(['second']);
    expect(await gate.acquire(AbortSignal.abort())).toBeNull();
  });

  it("holds the whole gate shut for a provider's retry-after, not only the caller", async () => {
    const clock = createManualClock();
    const gate = createProviderGate({ initialLimit: 4 }, clock);
    const [limited] = await take(gate, 1);
    expect(limited?.release({ ...OVERLOAD, retryAfterMs: 5_000 })).toEqual({ from: 4, to: 2, reason: 'rate limited (HTTP 429)', holdMs: 5_000 });
    const granted: string[] = [];
    const others = [queueUp(gate, 'a', granted), queueUp(gate, 'b', granted), queueUp(gate, 'c', granted)];
    await settle();
    expect(gate.state()).toMatchObject({ inFlight: 0, waiting: 3, heldForMs: 5_000 });
    clock.advance(4_999);
    await settle();
    expect(granted).toEqual([]);
    clock.advance(1);
    await Promise.all(others.slice(0, 2));
    await settle();
    // The hold is over; the halved limit still applies.
    expect(granted).toEqual(['a', 'b']);
    expect(gate.state()).toMatchObject({ inFlight: 2, waiting: 1, heldForMs: 0 });
  });

  it('lets everyone waiting through once a hold has passed, even a caller that comes before its timer fires', async () => {
    const clock = createManualClock();
    const gate = createProviderGate({ initialLimit: 4 }, clock);
    (await take(gate, 1))[0]?.release({ kind: 'failure', retryAfterMs: 1_000 });
    const granted: string[] = [];
    const first = queueUp(gate, 'first', granted);
    await settle();
    clock.advance(1_000);
    const second = queueUp(gate, 'second', granted);
    await Promise.all([first, second]);
    expect(granted).toEqual(['first', 'second']);
  });

  it('holds the gate for a retry-after that came with any failure, and drops its timer when nobody waits', async () => {
    const clock = createManualClock();
    const gate = createProviderGate({ initialLimit: 4 }, clock);
    const [failed] = await take(gate, 1);
    expect(failed?.release({ kind: 'failure', retryAfterMs: 60_000 })).toBeNull();
    expect(gate.state()).toMatchObject({ limit: 4, heldForMs: 60_000 });
    const leaving = new AbortController();
    const waiter = gate.acquire(leaving.signal);
    await settle();
    expect(clock.pending()).toBe(1);
    leaving.abort();
    expect(await waiter).toBeNull();
    expect(clock.pending()).toBe(0);
  });

  it('counts a slot released twice once', async () => {
    const gate = createProviderGate({ initialLimit: 2 });
    const [permit] = await take(gate, 1);
    permit?.release({ kind: 'success' });
    expect(permit?.release(OVERLOAD)).toBeNull();
    expect(gate.state()).toMatchObject({ limit: 2, inFlight: 0 });
  });
});
