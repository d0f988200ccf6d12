import { describe, expect, it } from 'vitest';
import type { SimAnswer } from './sim-answer.js';
import { cutAtOutputLimit } from './sim-output-limit.js';

/** Text of 40 characters and two calls of 40 (name and arguments): 120 characters, 30 tokens. */
const ANSWER: SimAnswer = {
  text: 'Publishing the two tasks the goal needs.',
  toolCalls: [
    { id: 'call_1_0', name: 'create_task', input: '{"title":"Build src/lib/abc"}' },
    { id: 'call_1_1', name: 'create_task', input: '{"title":"Build src/lib/xyz"}' },
  ],
  usage: { inputTokens: 500, outputTokens: 30, cachedInputTokens: 0 },
};

describe('the sim at its output limit', () => {
  it('answers whole when the answer fits, or when no limit was asked for', () => {
    expect(cutAtOutputLimit(ANSWER, 30, 0)).toEqual({ answer: ANSWER, cut: false });
    expect(cutAtOutputLimit(ANSWER, undefined, 0)).toEqual({ answer: ANSWER, cut: false });
  });

  it('stops in the middle of the call where the output runs out, keeping the calls before it and its arguments so far', () => {
    // 25 tokens are 100 characters: the text, the first call, then the second's name and 9 characters of its arguments.
    const { answer, cut } = cutAtOutputLimit(ANSWER, 25, 0);
    expect(cut).toBe(true);
    expect(answer.text).toBe(ANSWER.text);
    expect(answer.toolCalls).toEqual([ANSWER.toolCalls[0], { id: 'call_1_1', name: 'create_task', input: '{"title":' }]);
    expect(answer.usage).toEqual({ inputTokens: 500, outputTokens: 25, cachedInputTokens: 0 });
  });

  it('drops the calls it never began: a call whose name was not written, and every call after a cut one', () => {
    // 20 tokens are 80 characters: the text and the first call whole, nothing of the second.
    expect(cutAtOutputLimit(ANSWER, 20, 0).answer.toolCalls).toEqual([ANSWER.toolCalls[0]]);
    // 13 tokens are 52 characters: the text, the first call's name and one character of its arguments.
    expect(cutAtOutputLimit(ANSWER, 13, 0).answer.toolCalls).toEqual([{ id: 'call_1_0', name: 'create_task', input: '{' }]);
    // 12 tokens are 48 characters: the text and not even a name.
    expect(cutAtOutputLimit(ANSWER, 12, 0).answer).toMatchObject({ text: ANSWER.text, toolCalls: [] });
  });

  it('spends the extra tokens of its tokens knob first, as a model spends its reasoning', () => {
    const withExtra: SimAnswer = { ...ANSWER, usage: { ...ANSWER.usage, outputTokens: 130 } };
    expect(cutAtOutputLimit(withExtra, 130, 100)).toEqual({ answer: withExtra, cut: false });
    const { answer, cut } = cutAtOutputLimit(withExtra, 110, 100);
    expect(cut).toBe(true);
    expect(answer).toMatchObject({ text: ANSWER.text, toolCalls: [], usage: { outputTokens: 110 } });
    expect(cutAtOutputLimit(withExtra, 50, 100).answer).toMatchObject({ text: '', toolCalls: [] });
  });
});
