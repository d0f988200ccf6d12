import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ColonyEvent } from '../events/event-types.js';
import type { ChatModel, ModelRequest, ModelResult } from '../model/chat-model.js';
import { conversationLength, type Message } from '../model/messages.js';
import { createMemoryEventStore } from '../store/events/memory-event-store.js';
import type { AnyTool } from '../tools/tool.js';
import { createWriteScratchpadTool } from '../tools/write-scratchpad-tool.js';
import { runAgent } from './agent-loop.js';
import { AGENT_ID, recordStart, SYSTEM_PROMPT, TASK, testRecorder } from './testing/agent-restart.js';
import { SUMMARY_OPENING, type ContextPolicy } from './compaction.js';
import { rebuildConversation } from './conversation-rebuild.js';
import { tokensOfChars } from './context-size.js';

const COMPACTION_PROMPT = 'Context limit: summarise the conversation.';
/** What each `bulk` call returns: about 750 tokens. */
const BULK_OUTPUT = `${'line of output\n'.repeat(200)}end`;

const bulk: AnyTool = {
  name: 'bulk',
  description: 'Returns a lot of output.',
  parameters: z.object({ part: z.number() }),
  execute: async () => ({ ok: true, output: BULK_OUTPUT }),
};

const finish: AnyTool = {
  name: 'finish',
  description: 'Ends the agent.',
  parameters: z.object({}),
  execute: async () => ({ ok: true, output: 'finished', endsAgent: true }),
};

interface Answer {
  readonly text?: string;
  readonly calls?: readonly { readonly name: string; readonly input: unknown }[];
}

/**
 * A model that counts its input as a quarter of the characters it is sent (as the sim does),
 * summarises when no tool call is allowed, and otherwise answers with what `next` says for the step.
 * It keeps every request.
 */
function countingModel(next: (step: number) => Answer, summary: () => ModelResult | string = () => 'the work so far'): ChatModel & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  let steps = 0;
  return {
    spec: 'counting',
    requests,
    async call(request) {
      requests.push({ ...request, messages: [...request.messages] });
      const usage = { inputTokens: tokensOfChars(conversationLength(request.messages)), outputTokens: 10, cachedInputTokens: 0 };
      if (request.toolChoice === 'none') {
        const answer = summary();
        if (typeof answer !== 'string') return answer;
        return { ok: true, turn: { text: answer, toolCalls: [], finishReason: 'stop', usage, costUsd: 0, attempts: 1 } };
      }
      steps += 1;
      const planned = next(steps);
      const toolCalls = (planned.calls ?? []).map((call, index) => ({ id: `c${steps}_${index}`, name: call.name, input: JSON.stringify(call.input) }));
      return { ok: true, turn: { text: planned.text ?? '', toolCalls, finishReason: 'tool-calls', usage, costUsd: 0, attempts: 1 } };
    },
  };
}

const policy = (overrides: Partial<ContextPolicy> = {}): ContextPolicy => ({
  windowTokens: 6_000,
  outputTokens: 1_000,
  threshold: 0.8,
  compaction: true,
  compactionPrompt: COMPACTION_PROMPT,
  keptTurns: 3,
  ...overrides,
});

/** What the model says each step: about 340 tokens that no shrinking of outputs can save. */
const THINKING = 'Reading the output and deciding. '.repeat(40);

/** Forty steps of bulky output, then finish: far more than the window holds. */
const longTask = (step: number): Answer =>
  step <= 40 ? { text: THINKING, calls: [{ name: 'bulk', input: { part: step } }] } : { calls: [{ name: 'finish', input: {} }] };

async function runLong(context: ContextPolicy, model = countingModel(longTask)) {
  const store = createMemoryEventStore();
  const recorder = testRecorder(store);
  const tools = [bulk, finish];
  recordStart(recorder, tools);
  const outcome = await runAgent({ model, tools, systemPrompt: SYSTEM_PROMPT, task: TASK, recorder, maxSteps: 60, context });
  const events = await store.read({ agentId: AGENT_ID });
  const stepRequests = model.requests.filter((request) => request.toolChoice !== 'none');
  return { outcome, events, model, stepRequests };
}

const tokensOf = (request: ModelRequest): number => tokensOfChars(conversationLength(request.messages));
const ofType = <T extends ColonyEvent['type']>(events: readonly ColonyEvent[], type: T) =>
  events.filter((event): event is Extract<ColonyEvent, { type: T }> => event.type === type);

describe('compaction near the context window', () => {
  it('keeps every request inside the window, by shrinking old outputs and then summarising, and finishes', async () => {
    const { outcome, events, model, stepRequests } = await runLong(policy());
    expect(outcome.status).toBe('ended');
    expect(stepRequests).toHaveLength(41);
    expect(Math.max(...stepRequests.map(tokensOf))).toBeLessThanOrEqual(6_000);
    expect(ofType(events, 'context.shrunk').length).toBeGreaterThan(0);
    const compacted = ofType(events, 'context.compacted');
    expect(compacted.length).toBeGreaterThan(1);

    // The summary request holds the older part and the prompt, and describes the tools its history calls but allows no call.
    const summaryRequests = model.requests.filter((request) => request.toolChoice === 'none');
    expect(summaryRequests).toHaveLength(compacted.length);
    expect(summaryRequests.every((request) => request.tools.map((tool) => tool.name).join() === 'bulk,finish')).toBe(true);
    const first = summaryRequests[0]?.messages ?? [];
    expect(first.slice(0, 2)).toEqual([
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: TASK },
    ]);
    expect(first.at(-1)).toEqual({ role: 'user', content: COMPACTION_PROMPT });

    // The request after a summary: the opening, the summary, then the kept turns.
    const afterFirst = model.requests[model.requests.indexOf(summaryRequests[0] as ModelRequest) + 1]?.messages ?? [];
    expect(afterFirst[2]).toEqual({ role: 'user', content: `${SUMMARY_OPENING}\n\nthe work so far` });
    expect(afterFirst.filter((message) => message.role === 'assistant')).toHaveLength(3);
    // A later summary is asked of a conversation that holds the earlier one, so it carries it on.
    expect(summaryRequests[1]?.messages[2]).toEqual({ role: 'user', content: `${SUMMARY_OPENING}\n\nthe work so far` });
  });

  it('rebuilds from the log the same conversation the loop went on with', async () => {
    const { events, stepRequests } = await runLong(policy());
    const last = stepRequests.at(-1)?.messages ?? [];
    const rebuilt = rebuildConversation(events).messages;
    // After the last request only its answer and results were added.
    expect(rebuilt.slice(0, last.length)).toEqual(last);
    // Cut at a compaction too: the rebuild up to it matches the next request.
    const compactedAt = events.findIndex((event) => event.type === 'context.compacted');
    const upTo = rebuildConversation(events.slice(0, compactedAt + 1)).messages;
    const next = stepRequests.find((request) => request.messages[2]?.role === 'user' && (request.messages[2] as { content: string }).content.startsWith(SUMMARY_OPENING));
    expect(upTo).toEqual(next?.messages);
  });

  it('lets the conversation outgrow the window when compaction is off', async () => {
    const { outcome, events, stepRequests } = await runLong(policy({ compaction: false }));
    expect(outcome.status).toBe('ended');
    expect(Math.max(...stepRequests.map(tokensOf))).toBeGreaterThan(6_000 * 4);
    expect(ofType(events, 'context.compacted')).toHaveLength(0);
    expect(ofType(events, 'context.shrunk')).toHaveLength(0);
  });

  it('records a summary that cannot be had, goes on while the request fits, and stops the agent once it does not', async () => {
    const failure: ModelResult = { ok: false, attempts: 1, error: { kind: 'bad-request', message: 'no summaries today', status: 400, retryable: false, retryAfterMs: null } };
    const model = countingModel(longTask, () => failure);
    const { outcome, events, stepRequests } = await runLong(policy(), model);
    expect(outcome.status).toBe('failed');
    if (outcome.status !== 'failed') return;
    expect(outcome.reason).toMatch(/does not fit the model's context window \(\d+ tokens of 6000, 600 of them kept for the answer\).*no summaries today/);
    const failed = ofType(events, 'context.compaction-failed');
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]?.data.reason).toContain('no summaries today');
    // It was not asked at every step: only again once the conversation grew past where it failed.
    expect(model.requests.filter((request) => request.toolChoice === 'none').length).toBeLessThan(stepRequests.length / 2);
    // A tenth of the window stays free for the answer, even when no summary can be had.
    expect(Math.max(...stepRequests.map(tokensOf))).toBeLessThanOrEqual(5_400);
  });
});

describe('room for the answer', () => {
  const inputAndOutput = (request: ModelRequest): number => tokensOf(request) + (request.maxOutputTokens ?? Infinity);

  it('asks every call, summaries included, for the output limit, or for what the window leaves when that is less', async () => {
    const { outcome, model, events } = await runLong(policy({ outputTokens: 2_000 }));
    expect(outcome.status).toBe('ended');
    for (const request of model.requests) expect(request.maxOutputTokens).toBe(Math.min(2_000, 6_000 - tokensOf(request)));
    // Each request's limit is in its model.requested, for the log to show.
    expect(ofType(events, 'model.requested').map((event) => event.data.maxOutputTokens)).toEqual(model.requests.map((request) => request.maxOutputTokens));
    expect(model.requests.some((request) => request.maxOutputTokens === 2_000)).toBe(true);
    expect(model.requests.some((request) => (request.maxOutputTokens ?? 0) < 2_000)).toBe(true);
    expect(Math.max(...model.requests.map(inputAndOutput))).toBeLessThanOrEqual(6_000);
  });

  it('compacts before the input reaches the reserve kept for the answer, even at a threshold of the whole window', async () => {
    const { outcome, events, model } = await runLong(policy({ outputTokens: 2_000, threshold: 1 }));
    expect(outcome.status).toBe('ended');
    expect(ofType(events, 'context.compacted').length).toBeGreaterThan(0);
    expect(Math.min(...model.requests.map((request) => request.maxOutputTokens ?? 0))).toBeGreaterThanOrEqual(600);
    expect(Math.max(...model.requests.map(inputAndOutput))).toBeLessThanOrEqual(6_000);
  });
});

describe('compaction at the edges', () => {
  it('compacts and asks again when the provider refuses a request colony thought would fit', async () => {
    // The provider's real window is half what colony was told.
    const refusing = countingModel(longTask);
    const inner = refusing.call.bind(refusing);
    let refusals = 0;
    const model: ChatModel & { requests: ModelRequest[] } = Object.assign(refusing, {
      async call(request: ModelRequest, options?: Parameters<ChatModel['call']>[1]): Promise<ModelResult> {
        const tokens = tokensOfChars(conversationLength(request.messages));
        if (tokens > 3_000) {
          refusals += 1;
          refusing.requests.push(request);
          return { ok: false, attempts: 1, error: { kind: 'context-length', message: `maximum context length is 3000 tokens, the request has ${tokens}`, status: 400, retryable: false, retryAfterMs: null } };
        }
        return inner(request, options);
      },
    });
    const { outcome, events } = await runLong(policy(), model);
    expect(outcome.status).toBe('ended');
    expect(refusals).toBeGreaterThan(0);
    expect(ofType(events, 'context.compacted').length).toBeGreaterThan(0);
    // Once refused, colony takes the provider's word: it is not refused at every step after.
    expect(refusals).toBeLessThan(10);
  });

  it('never summarises what the agent has not answered yet: the newest messages stay word for word', async () => {
    const store = createMemoryEventStore();
    const recorder = testRecorder(store);
    const tools = [bulk, finish];
    recordStart(recorder, tools);
    let step = 0;
    const inbox = {
      take: async () => [{ fromTaskId: null, content: `Handoff number ${(step += 1)}` }],
      pending: async () => ({ unread: 0, openChildren: 0 }),
      wait: async () => undefined,
    };
    const model = countingModel(longTask);
    await runAgent({ model, tools, systemPrompt: SYSTEM_PROMPT, task: TASK, recorder, maxSteps: 60, inbox, context: policy({ keptTurns: 0 }) });
    const compactedAt = model.requests.findIndex((request) => request.toolChoice === 'none');
    expect(compactedAt).toBeGreaterThan(0);
    const summaryRequest = model.requests[compactedAt];
    const next = model.requests[compactedAt + 1];
    // The request after the summary: the summary, then the message taken this step, as it was.
    expect(next?.messages.slice(2).map((message) => (message.role === 'user' ? message.content.split('\n')[0] : message.role))).toEqual([
      SUMMARY_OPENING,
      expect.stringMatching(/^Handoff number \d+$/),
    ]);
    const newest = next?.messages.at(-1);
    // The summary was asked of everything before it, not of it.
    expect(summaryRequest?.messages.some((message) => message.role === 'user' && message.content === (newest?.role === 'user' ? newest.content : ''))).toBe(false);
    expect(summaryRequest?.messages.some((message) => message.role === 'user' && message.content.startsWith('Handoff number'))).toBe(true);
  });
});

describe('the scratchpad', () => {
  it('is shown, latest only, after the conversation in every request, and replaced whole by each write', async () => {
    let pad: string | null = null;
    const tool = createWriteScratchpadTool((content) => {
      pad = content;
    });
    const plan: Answer[] = [
      { calls: [{ name: 'write_scratchpad', input: { content: 'plan A: first draft' } }] },
      { calls: [{ name: 'write_scratchpad', input: { content: 'plan B: rewritten' } }] },
      { calls: [{ name: 'finish', input: {} }] },
    ];
    const model = countingModel((step) => plan[step - 1] ?? {});
    const store = createMemoryEventStore();
    const recorder = testRecorder(store);
    recordStart(recorder, [tool, finish]);
    await runAgent({ model, tools: [tool, finish], systemPrompt: SYSTEM_PROMPT, task: TASK, recorder, maxSteps: 5, scratchpad: () => pad });

    const shown = (request: ModelRequest | undefined): Message[] =>
      (request?.messages ?? []).filter((message) => message.role === 'user' && message.content.startsWith('Your scratchpad'));
    expect(shown(model.requests[0])).toHaveLength(0);
    expect(model.requests[1]?.messages.at(-1)).toEqual(expect.objectContaining({ role: 'user', content: expect.stringContaining('plan A: first draft') }));
    const third = model.requests[2];
    expect(shown(third)).toHaveLength(1);
    expect(third?.messages.at(-1)).toEqual(expect.objectContaining({ content: expect.stringContaining('plan B: rewritten') }));
    expect(JSON.stringify(shown(third))).not.toContain('plan A');
    // Shown, not kept: the rebuilt conversation holds no scratchpad message.
    const rebuilt = rebuildConversation(await store.read({ agentId: AGENT_ID })).messages;
    expect(rebuilt.some((message) => message.role === 'user' && message.content.startsWith('Your scratchpad'))).toBe(false);
  });
});

describe('reminders', () => {
  const idle = (step: number): Answer => (step < 12 ? { calls: [{ name: 'bulk', input: { part: step } }] } : { calls: [{ name: 'finish', input: {} }] });

  async function remindersOf(reflectEvery: number | null, scratchpadEvery: number | null, writesAt: readonly number[] = []) {
    let pad: string | null = null;
    const write = createWriteScratchpadTool((content) => {
      pad = content;
    });
    const model = countingModel((step) => {
      const planned = idle(step);
      return writesAt.includes(step) ? { calls: [{ name: 'write_scratchpad', input: { content: `at ${step}` } }, ...(planned.calls ?? [])] } : planned;
    });
    const store = createMemoryEventStore();
    const recorder = testRecorder(store);
    const tools = [bulk, finish, write];
    recordStart(recorder, tools);
    await runAgent({
      model,
      tools,
      systemPrompt: SYSTEM_PROMPT,
      task: TASK,
      recorder,
      maxSteps: 20,
      scratchpad: () => pad,
      reminders: { reflectEvery, reflectText: 'Reflection reminder: check.', scratchpadEvery, scratchpadText: 'Scratchpad reminder: rewrite it.' },
    });
    return ofType(await store.read({ agentId: AGENT_ID }), 'agent.nudged').map((event) => `${event.data.reminder ?? 'none'}@${event.data.step}`);
  }

  it('asks to reflect every N steps', async () => {
    expect(await remindersOf(4, null)).toEqual(['reflect@5', 'reflect@9']);
  });

  it('asks for the scratchpad after N steps without a rewrite, counting from the last one', async () => {
    expect(await remindersOf(null, 4)).toEqual(['scratchpad@5', 'scratchpad@10']);
    expect(await remindersOf(null, 4, [3])).toEqual(['scratchpad@8']);
  });
});
