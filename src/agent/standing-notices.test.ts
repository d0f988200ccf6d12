import { describe, expect, it } from 'vitest';
import type { Message } from '../model/messages.js';
import { createMemoryEventStore } from '../store/events/memory-event-store.js';
import { runAgent } from './agent-loop.js';
import { interruptedAnswer } from './agent-restore.js';
import { rebuildConversation } from './conversation-rebuild.js';
import type { StandingNotice } from './standing-notices.js';
import { AGENT_ID, capturingModel, countingTools, recordStart, restartedLog, SYSTEM_PROMPT, TASK, testRecorder } from './testing/agent-restart.js';

const echo = (text: string) => ({ toolCalls: [{ name: 'echo', input: { text } }] });
const FINISH = { toolCalls: [{ name: 'finish', input: { summary: 'ok' } }] };

/** The user messages of a request that hold a notice, with their place from its end. */
function noticesIn(request: readonly Message[]): { fromEnd: number; content: string }[] {
  return request.flatMap((message, index) =>
    message.role === 'user' && message.content.includes('Notice') ? [{ fromEnd: request.length - index, content: message.content }] : [],
  );
}

describe('standing notices', () => {
  it('stand after the conversation, the latest of each kind only, and are withdrawn when left out', async () => {
    const log = createMemoryEventStore();
    const recorder = testRecorder(log);
    const { tools } = countingTools();
    const model = capturingModel([echo('one'), echo('two'), echo('three'), FINISH]);
    // What the agent is to be shown before each of its four model calls.
    const asked: StandingNotice[][] = [
      [{ kind: 'files', text: 'Notice files: a.js' }],
      [{ kind: 'files', text: 'Notice files: a.js' }, { kind: 'view', text: 'Notice view: behind' }],
      [{ kind: 'files', text: 'Notice files: b.js' }],
      [],
    ];
    recordStart(recorder, tools);
    const outcome = await runAgent({ model, tools, systemPrompt: SYSTEM_PROMPT, task: TASK, recorder, maxSteps: 10, notices: () => asked.shift() ?? [] });
    expect(outcome).toEqual({ status: 'ended', steps: 4 });

    expect(model.seen.map(noticesIn)).toEqual([
      [{ fromEnd: 1, content: 'Notice files: a.js' }],
      [{ fromEnd: 1, content: 'Notice files: a.js\n\nNotice view: behind' }],
      [{ fromEnd: 1, content: 'Notice files: b.js' }],
      [],
    ]);
    // The conversation itself never holds one: each request is the one before, its answer and results, then the notices.
    for (const [index, request] of model.seen.entries()) {
      const conversation = request.filter((message) => !(message.role === 'user' && message.content.includes('Notice')));
      expect(conversation).toHaveLength(2 + 2 * index);
    }
    // Each change is recorded once; an empty message withdraws a kind.
    const told = (await log.read({ agentId: AGENT_ID })).flatMap((event) => (event.type === 'agent.nudged' ? [[event.data.step, event.data.notice, event.data.message]] : []));
    expect(told).toEqual([
      [1, 'files', 'Notice files: a.js'],
      [2, 'view', 'Notice view: behind'],
      [3, 'view', ''],
      [3, 'files', 'Notice files: b.js'],
      [4, 'files', ''],
    ]);
  });

  it('are shown again after a restart as they stood, without being told again, and never enter the rebuilt conversation', async () => {
    const log = createMemoryEventStore();
    const first = testRecorder(log);
    const { tools } = countingTools();
    recordStart(first, tools);
    const asked: StandingNotice[][] = [[{ kind: 'files', text: 'Notice files: a.js' }], [{ kind: 'files', text: 'Notice files: b.js' }]];
    // Two calls, then its steps run out: its log is what a restart finds.
    const firstModel = capturingModel([echo('one'), echo('two')]);
    const firstLife = await runAgent({ model: firstModel, tools, systemPrompt: SYSTEM_PROMPT, task: TASK, recorder: first, maxSteps: 2, notices: () => asked.shift() ?? [] });
    expect(firstLife).toMatchObject({ status: 'failed' });

    const events = await log.read({ agentId: AGENT_ID });
    const conversation = rebuildConversation(events);
    expect(conversation.messages.some((message) => message.role === 'user' && message.content.includes('Notice'))).toBe(false);
    expect([...conversation.notices]).toEqual([['files', 'Notice files: b.js']]);

    const next = restartedLog(createMemoryEventStore, events);
    const recorder = testRecorder(next);
    const model = capturingModel([FINISH]);
    const outcome = await runAgent({
      model,
      tools,
      systemPrompt: SYSTEM_PROMPT,
      task: TASK,
      recorder,
      maxSteps: 10,
      notices: () => [{ kind: 'files', text: 'Notice files: b.js' }],
      restore: { conversation, attempt: 2, answerInterrupted: async (call) => interruptedAnswer(call) },
    });
    expect(outcome).toMatchObject({ status: 'ended' });
    expect(model.seen.map(noticesIn)).toEqual([[{ fromEnd: 1, content: 'Notice files: b.js' }]]);
    const toldAfter = (await next.read({ agentId: AGENT_ID })).filter((event) => event.seq > (events.at(-1)?.seq ?? 0) && event.type === 'agent.nudged');
    expect(toldAfter).toEqual([]);
  });
});
