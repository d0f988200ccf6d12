import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ColonyEvent } from '../events/event-types.js';
import { promptToMessages } from '../model/providers/prompt-conversion.js';
import { resolveModel } from '../model/registry.js';
import { startModelServer, type ModelServer } from '../model/server/model-server.js';
import { createScriptedLanguageModel } from '../model/testing/scripted-language-model.js';
import { CUT_OFF_OPENING } from '../protocol/message-openings.js';
import { createSimLanguageModel } from '../sim/sim-language-model.js';
import { DEFAULT_SIM_OPTIONS } from '../sim/sim-options.js';
import { goalWith, range } from '../sim/testing/planner-tools.js';
import { createMemoryEventStore } from '../store/events/memory-event-store.js';
import type { AnyTool } from '../tools/tool.js';
import { runAgent } from './agent-loop.js';
import type { ContextPolicy } from './compaction.js';
import { cutOffMessage } from './cut-off-call.js';
import { AGENT_ID, countingTools, recordStart, SYSTEM_PROMPT, TASK, testRecorder } from './testing/agent-restart.js';

/**
 * An answer cut off at its output limit, as colony meets it from a real provider: the answer
 * travels as server-sent events in the provider's own wire format from the model server to
 * the provider's real adapter, which hands the cut call over as far as it got.
 */

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const ENV = { ANTHROPIC_API_KEY: 'local-test-key' };

function policy(outputTokens: number): ContextPolicy {
  return { windowTokens: 200_000, outputTokens, threshold: 0.8, compaction: true, compactionPrompt: 'Context limit: summarise.', keptTurns: 4 };
}

function modelAt(spec: string, running: ModelServer) {
  const resolved = resolveModel(spec, { baseUrl: `${running.url}/v1`, env: ENV, retry: { maxAttempts: 1 } });
  if (!resolved.ok) throw new Error(resolved.error);
  return resolved.model;
}

const ended = (events: readonly ColonyEvent[]): string[] => events.flatMap((event) => (event.type === 'tool.ended' ? [event.data.output] : []));

describe.each(['openai-compatible:scripted', 'anthropic:scripted'])('a cut-off answer over HTTP: %s', (spec) => {
  it('sends the limit, answers the cut call with the cut-off error after the calls before it ran, and the agent goes on', async () => {
    const scripted = createScriptedLanguageModel([
      { finishReason: 'length', toolCalls: [{ name: 'echo', input: { text: 'one' } }, { name: 'echo', input: '{"text": "tw' }] },
      { toolCalls: [{ name: 'finish', input: { summary: 'done in two answers' } }] },
    ]);
    server = await startModelServer({ model: scripted });
    const store = createMemoryEventStore();
    const recorder = testRecorder(store);
    const { tools, runs } = countingTools();
    recordStart(recorder, tools);
    const outcome = await runAgent({ model: modelAt(spec, server), tools, systemPrompt: SYSTEM_PROMPT, task: TASK, recorder, maxSteps: 5, context: policy(300) });

    expect(outcome).toEqual({ status: 'ended', steps: 2 });
    expect(runs).toEqual(['echo one', 'finish']);
    expect(server.requests.map((request) => (request.body as { max_tokens?: unknown }).max_tokens)).toEqual([300, 300]);
    const events = await store.read({ agentId: AGENT_ID });
    expect(events.flatMap((event) => (event.type === 'model.responded' ? [event.data.finishReason] : []))).toEqual(['length', 'tool-calls']);
    expect(ended(events)).toEqual(['echo: one', `error: ${cutOffMessage({ outputTokens: 300 })}`, 'finished']);
    // The model's next request holds the answer to its cut call.
    const second = promptToMessages(scripted.calls[1]?.options.prompt ?? []);
    expect(second.at(-1)).toMatchObject({ role: 'tool', toolName: 'echo', content: expect.stringContaining(CUT_OFF_OPENING) });
  });
});

/** The planner tools as the sim planner needs them to publish a goal: each create_task makes a task. */
function plannerTools(titles: string[]): AnyTool[] {
  return [
    {
      name: 'create_task',
      description: 'Publishes a task.',
      parameters: z.object({ title: z.string(), brief: z.string() }),
      execute: async (input: { title: string }) => (titles.push(input.title), { ok: true, output: `Created task task_${titles.length}: ${input.title}` }),
    },
    {
      name: 'write_scratchpad',
      description: 'Replaces the scratchpad.',
      parameters: z.object({ content: z.string() }),
      execute: async (input: { content: string }) => ({ ok: true, output: `Scratchpad saved (${input.content.length} characters).` }),
    },
    { name: 'finish', description: 'Ends the planner.', parameters: z.object({ status: z.string() }), execute: async () => ({ ok: true, output: 'Finished.', endsAgent: true }) },
  ];
}

describe('the sim planner cut off at its output limit over HTTP', () => {
  it('is stopped mid-call by the limit colony sends, gets the cut-off error, and publishes the rest fewer at a time, every module once', async () => {
    server = await startModelServer({ model: createSimLanguageModel(DEFAULT_SIM_OPTIONS) });
    const store = createMemoryEventStore();
    const recorder = testRecorder(store);
    const titles: string[] = [];
    const tools = plannerTools(titles);
    const modules = range('src/lib/m', 12);
    recordStart(recorder, tools, goalWith(modules));
    // Twelve tasks take about 2,400 tokens in one answer; 1,000 holds four of them.
    const outcome = await runAgent({ model: modelAt('openai-compatible:sim', server), tools, systemPrompt: SYSTEM_PROMPT, task: goalWith(modules), recorder, maxSteps: 6, context: policy(1_000) });

    // With every task published and no handoff to wait for, it only stops calling tools.
    expect(outcome).toMatchObject({ status: 'failed', reason: expect.stringContaining('stopped calling tools') });
    expect(server.requests.every((request) => (request.body as { max_tokens?: unknown }).max_tokens === 1_000)).toBe(true);
    const events = await store.read({ agentId: AGENT_ID });
    const reasons = events.flatMap((event) => (event.type === 'model.responded' ? [event.data.finishReason] : []));
    // Cut once: told so, it published no more at once than got through.
    expect(reasons.slice(0, 3)).toEqual(['length', 'tool-calls', 'tool-calls']);
    expect(reasons.filter((reason) => reason === 'length')).toHaveLength(1);
    expect(ended(events).filter((output) => output === `error: ${cutOffMessage({ outputTokens: 1_000 })}`)).toHaveLength(1);
    expect([...titles].sort()).toEqual(modules.map((path) => `Build ${path}`).sort());
  });
});
