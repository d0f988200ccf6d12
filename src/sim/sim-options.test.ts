import { describe, expect, it } from 'vitest';
import { DEFAULT_SIM_OPTIONS, parseSimSpec } from './sim-options.js';

describe('parseSimSpec', () => {
  it('gives the defaults for a bare sim', () => {
    expect(parseSimSpec('sim')).toEqual({ ok: true, options: DEFAULT_SIM_OPTIONS });
    expect(DEFAULT_SIM_OPTIONS).toEqual({ seed: 1, latencyMs: { min: 0, max: 0 }, bug: 0, lie: 0, malformed: 0, crash: 0, tokens: 0, stall: 0, context: null, skiptests: 0, unmerged: 0, notes: 0, republish: 0, wholesuite: 0, testfix: 0, dependent: 0 });
  });

  it('reads every knob', () => {
    expect(parseSimSpec('sim?seed=7&latency=50..400&bug=0.2&lie=0.3&malformed=0.05&crash=0.02&tokens=300&stall=0.1&context=8000&skiptests=0.25&unmerged=0.5&notes=0.4&republish=0.6&wholesuite=1&testfix=0.7&dependent=0.8')).toEqual({
      ok: true,
      options: { seed: 7, latencyMs: { min: 50, max: 400 }, bug: 0.2, lie: 0.3, malformed: 0.05, crash: 0.02, tokens: 300, stall: 0.1, context: 8000, skiptests: 0.25, unmerged: 0.5, notes: 0.4, republish: 0.6, wholesuite: 1, testfix: 0.7, dependent: 0.8 },
    });
    expect(parseSimSpec('sim?latency=120')).toMatchObject({ ok: true, options: { latencyMs: { min: 120, max: 120 } } });
    expect(parseSimSpec('sim?bug=1&crash=0')).toMatchObject({ ok: true, options: { bug: 1, crash: 0 } });
  });

  it.each([
    ['sim?colour=blue', 'unknown key "colour"'],
    ['sim?bug=1.5', 'bug must be a probability from 0 to 1, got "1.5"'],
    ['sim?malformed=lots', 'malformed must be a probability from 0 to 1, got "lots"'],
    ['sim?stall=2', 'stall must be a probability from 0 to 1, got "2"'],
    ['sim?lie=often', 'lie must be a probability from 0 to 1, got "often"'],
    ['sim?skiptests=1.2', 'skiptests must be a probability from 0 to 1, got "1.2"'],
    ['sim?unmerged=yes', 'unmerged must be a probability from 0 to 1, got "yes"'],
    ['sim?wholesuite=2', 'wholesuite must be a probability from 0 to 1, got "2"'],
    ['sim?notes=-0.1', 'notes must be a probability from 0 to 1, got "-0.1"'],
    ['sim?republish=2', 'republish must be a probability from 0 to 1, got "2"'],
    ['sim?latency=400..50', 'latency must be milliseconds as N or A..B'],
    ['sim?latency=-5', 'latency must be milliseconds as N or A..B'],
    ['sim?seed=1.5', 'seed must be an integer, got "1.5"'],
    ['sim?tokens=-1', 'tokens must be an integer >= 0'],
    ['sim?context=500', 'context must be a number of tokens, an integer >= 1000, got "500"'],
    ['sim?seed=1&seed=2', 'sets seed twice'],
    ['simulator', 'is not a sim spec'],
  ])('rejects %s with a clear message listing the accepted keys', (spec, message) => {
    const parsed = parseSimSpec(spec);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toContain(message);
    expect(parsed.error).toContain('Accepted keys: seed');
    for (const key of ['latency', 'bug', 'lie', 'malformed', 'crash', 'tokens', 'stall', 'context', 'skiptests', 'unmerged', 'notes', 'republish', 'wholesuite', 'testfix', 'dependent']) expect(parsed.error).toContain(key);
  });
});
