import type { LanguageModelV3Content } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import type { Message } from '../model/messages.js';
import { messagesToPrompt, toolSpecsToFunctionTools } from '../model/providers/prompt-conversion.js';
import { createPlannerSession, goalWith, PLANNER_TOOL_NAMES, range } from './testing/planner-tools.js';
import { createSimLanguageModel } from './sim-language-model.js';
import type { SimOptions } from './sim-options.js';
import { DEFAULT_SIM_OPTIONS } from './sim-options.js';
import { simLatencyMs } from './sim-turn.js';
import { WORKER_TOOL_NAMES } from './testing/tool-executor.js';

const goal = goalWith(range('src/text/t', 3));

function toolsNamed(names: readonly string[]): ReturnType<typeof toolSpecsToFunctionTools> {
  return toolSpecsToFunctionTools(names.map((name) => ({ name, description: name, inputSchema: { type: 'object' } })));
}

async function generate(messages: readonly Message[], toolNames: readonly string[], options: SimOptions = DEFAULT_SIM_OPTIONS) {
  const waits: number[] = [];
  const model = createSimLanguageModel(options, async (ms) => {
    waits.push(ms);
  });
  const result = await model.doGenerate({ prompt: messagesToPrompt(messages), tools: toolsNamed(toolNames) });
  return { result, waits };
}

function toolNamesOf(content: readonly LanguageModelV3Content[]): string[] {
  return content.flatMap((part) => (part.type === 'tool-call' ? [part.toolName] : []));
}

describe('createSimLanguageModel: which policy answers', () => {
  const start: Message[] = [
    { role: 'system', content: 'You are colony.' },
    { role: 'user', content: goal },
  ];

  it('plays the planner when create_task is offered', async () => {
    const { result } = await generate(start, PLANNER_TOOL_NAMES);
    expect(toolNamesOf(result.content)).toEqual(['write_scratchpad', 'create_task', 'create_task', 'create_task']);
    expect(result.finishReason.unified).toBe('tool-calls');
  });

  it('plays the worker otherwise', async () => {
    const { result } = await generate(start, WORKER_TOOL_NAMES);
    expect(toolNamesOf(result.content)).toEqual(['list_dir']);
  });

  it('reads a planner conversation back through the provider format and waits without tool calls', async () => {
    const session = createPlannerSession({ brief: goal });
    session.turn();
    session.handOff('task_1', { status: 'done', summary: 'Built it.' });
    const { result } = await generate(session.messages, PLANNER_TOOL_NAMES);
    expect(toolNamesOf(result.content)).toEqual([]);
    expect(result.content).toEqual([
      { type: 'text', text: 'Waiting for 2 handoffs (tasks task_2, task_3); nothing to do until one arrives.' },
    ]);
    expect(result.finishReason.unified).toBe('stop');
  });

  it('waits the seeded latency for planner conversations too', async () => {
    const options = { ...DEFAULT_SIM_OPTIONS, seed: 5, latencyMs: { min: 50, max: 400 } };
    const session = createPlannerSession({ brief: goal });
    const values: number[] = [];
    for (let turn = 0; turn < 4; turn += 1) {
      const { waits } = await generate(session.messages, PLANNER_TOOL_NAMES, options);
      expect(waits).toEqual([simLatencyMs(options, session.messages)]);
      values.push(...waits);
      session.turn();
    }
    for (const value of values) expect(value).toBeGreaterThanOrEqual(50);
    for (const value of values) expect(value).toBeLessThanOrEqual(400);
    expect(new Set(values).size).toBeGreaterThan(1);
  });
});
