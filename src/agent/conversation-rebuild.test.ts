import { describe, expect, it } from 'vitest';
import type { ColonyEvent } from '../events/event-types.js';
import type { Message } from '../model/messages.js';
import { createMemoryEventStore } from '../store/events/memory-event-store.js';
import { runAgent, type AgentInbox, type InboxDelivery } from './agent-loop.js';
import { AGENT_ID, capturingModel, countingTools, recordStart, SYSTEM_PROMPT, TASK, testRecorder } from './testing/agent-restart.js';
import { rebuildConversation } from './conversation-rebuild.js';

/** An inbox that hands the planner two messages before its second model call, and never waits. */
function inboxWithMessagesAtStepTwo(): AgentInbox {
  const atStepTwo: InboxDelivery[] = [
    { fromTaskId: 'task-7', content: 'Handoff from task task-7 "Build x"\nstatus: done', inboxSeq: 7 },
    { fromTaskId: null, content: 'Message from the user:\nplease hurry' },
  ];
  let takes = 0;
  return {
    take: async () => ((takes += 1), takes === 2 ? atStepTwo : []),
    pending: async () => ({ unread: 0, openChildren: 0 }),
    wait: async () => undefined,
  };
}

/** A real run through every kind of message the loop adds, logged in a memory event store. */
async function recordedRun(): Promise<{ events: ColonyEvent[]; seen: Message[][] }> {
  const store = createMemoryEventStore();
  const recorder = testRecorder(store);
  const { tools } = countingTools();
  const model = capturingModel([
    {
      text: 'Looking around.',
      toolCalls: [
        { id: 'c1', name: 'echo', input: { text: 'one' } },
        { id: 'c2', name: 'echo', input: '{"text": ' },
        { id: 'c3', name: 'nosuch', input: {} },
      ],
    },
    { text: 'Thinking it over.' },
    {
      toolCalls: [
        { id: 'c4', name: 'echo', input: { text: 'two' } },
        { id: 'c5', name: 'echo', input: { text: 'three' } },
      ],
    },
    {
      toolCalls: [
        { id: 'c6', name: 'finish', input: { summary: 'ok' } },
        { id: 'c7', name: 'echo', input: { text: 'late' } },
      ],
    },
  ]);
  let checks = 0;
  recordStart(recorder, tools);
  const outcome = await runAgent({
    model,
    tools,
    systemPrompt: SYSTEM_PROMPT,
    task: TASK,
    recorder,
    maxSteps: 10,
    inbox: inboxWithMessagesAtStepTwo(),
    beforeModelCall: async () => ((checks += 1), checks === 3 ? 'Your view of main moved to a new commit.' : null),
  });
  expect(outcome).toEqual({ status: 'ended', steps: 4 });
  return { events: await store.read({ agentId: AGENT_ID }), seen: model.seen };
}

/** Messages each event adds to the conversation, as the loop adds them. */
const ADDED: Partial<Record<ColonyEvent['type'], number>> = {
  'agent.started': 2,
  'message.received': 1,
  'agent.nudged': 1,
  'model.responded': 1,
  'tool.ended': 1,
};

describe('rebuildConversation', () => {
  it('gives, at every point the log could stop, exactly what the model was sent next', async () => {
    const { events, seen } = await recordedRun();
    const last = seen.at(-1) ?? [];
    const final: Message[] = [
      ...last,
      { role: 'assistant', text: '', toolCalls: [{ id: 'c6', name: 'finish', input: '{"summary":"ok"}' }, { id: 'c7', name: 'echo', input: '{"text":"late"}' }] },
      { role: 'tool', callId: 'c6', toolName: 'finish', content: 'finished', isError: false },
      { role: 'tool', callId: 'c7', toolName: 'echo', content: 'error: not run: the handoff was already submitted', isError: true },
    ];
    let previous = 0;
    let exactCuts = 0;
    for (let cut = 1; cut <= events.length; cut += 1) {
      const prefix = events.slice(0, cut);
      const rebuilt = rebuildConversation(prefix);
      const answered = prefix.filter((event) => event.type === 'model.responded').length;
      expect(rebuilt.step).toBe(answered);
      // The next request holds everything the loop had at this point, and only adds to it.
      const next = seen[answered] ?? final;
      expect(rebuilt.messages).toEqual(next.slice(0, rebuilt.messages.length));
      const event = prefix[cut - 1];
      if (event?.type === 'model.requested') {
        // Stopped during this model call: asking again sends exactly the same conversation.
        expect(rebuilt.messages).toEqual(next);
        expect(rebuilt.messages).toHaveLength(event.data.messages);
        exactCuts += 1;
      }
      expect(rebuilt.messages.length - previous).toBe(ADDED[event?.type ?? 'run.started'] ?? 0);
      previous = rebuilt.messages.length;
    }
    expect(exactCuts).toBe(4);
    expect(rebuildConversation(events).messages).toEqual(final);
  });

  it('keeps the rejected calls, the inbox messages and the nudges with their roles and error flags', async () => {
    const { seen } = await recordedRun();
    const second = seen[1] ?? [];
    expect(second.filter((message) => message.role === 'tool').map((message) => [message.callId, message.isError])).toEqual([
      ['c1', false],
      ['c2', true],
      ['c3', true],
    ]);
    expect(second.slice(-2).map((message) => message.role)).toEqual(['user', 'user']);
    expect((seen[2] ?? []).slice(-3)).toEqual([
      { role: 'assistant', text: 'Thinking it over.', toolCalls: [] },
      { role: 'user', content: expect.stringMatching(/submit_handoff/) },
      { role: 'user', content: 'Your view of main moved to a new commit.' },
    ]);
  });

  it('says which calls of the last answer were running and which never started', async () => {
    const { events } = await recordedRun();
    const cutAfter = (type: ColonyEvent['type'], callId: string): ReturnType<typeof rebuildConversation> => {
      const index = events.findIndex((event) => event.type === type && 'callId' in event.data && event.data.callId === callId);
      return rebuildConversation(events.slice(0, index + 1));
    };
    const answeredFirst = rebuildConversation(events.slice(0, events.findIndex((event) => event.type === 'model.responded') + 1));
    expect(answeredFirst.interrupted).toEqual([]);
    expect(answeredFirst.notStarted.map((call) => call.id)).toEqual(['c1', 'c2', 'c3']);
    expect(answeredFirst.lastToolCall).toBeNull();

    const running = cutAfter('tool.started', 'c2');
    expect(running.interrupted).toEqual([{ step: 1, call: { id: 'c2', name: 'echo', input: '{"text": ' } }]);
    expect(running.notStarted.map((call) => call.id)).toEqual(['c3']);
    expect(running.lastToolCall).toBe('echo({"text": )');

    const ended = cutAfter('tool.ended', 'c2');
    expect([ended.interrupted, ended.notStarted.map((call) => call.id)]).toEqual([[], ['c3']]);

    const finishing = cutAfter('tool.started', 'c6');
    expect(finishing.interrupted.map(({ step, call }) => [step, call.id])).toEqual([[4, 'c6']]);
    expect(finishing.notStarted.map((call) => call.id)).toEqual(['c7']);
  });

  it('lists the calls that succeeded, the inbox messages taken and the last call', async () => {
    const rebuilt = rebuildConversation((await recordedRun()).events);
    expect(rebuilt.succeededCalls).toEqual([
      { name: 'echo', input: '{"text":"one"}', output: 'echo: one', step: 1 },
      { name: 'echo', input: '{"text":"two"}', output: 'echo: two', step: 3 },
      { name: 'echo', input: '{"text":"three"}', output: 'echo: three', step: 3 },
      { name: 'finish', input: '{"summary":"ok"}', output: 'finished', step: 4 },
    ]);
    expect([...rebuilt.receivedInboxSeqs]).toEqual([7]);
    expect(rebuilt.lastToolCall).toBe('echo({"text":"late"})');
    expect([rebuilt.step, rebuilt.interrupted, rebuilt.notStarted]).toEqual([4, [], []]);
  });

  it('refuses a log without agent.started, with another agent in it, or with results out of order', async () => {
    const { events } = await recordedRun();
    expect(() => rebuildConversation(events.slice(1))).toThrow(/needs the agent's agent.started event/);
    expect(() => rebuildConversation([])).toThrow(/needs the agent's agent.started event/);
    const stranger = { ...events[3], agentId: 'worker-other' } as ColonyEvent;
    expect(() => rebuildConversation([...events.slice(0, 3), stranger])).toThrow(/one agent's events: seq \d+ is worker-other's/);
    const secondEnded = events.filter((event) => event.type === 'tool.ended')[1];
    const startedFirst = events.findIndex((event) => event.type === 'tool.started');
    expect(() => rebuildConversation([...events.slice(0, startedFirst + 1), secondEnded as ColonyEvent])).toThrow(/call c2 is out of order/);
    const responded = events.filter((event) => event.type === 'model.responded');
    expect(() => rebuildConversation([...events.slice(0, startedFirst + 1), responded[1] as ColonyEvent])).toThrow(
      /model call 1 still has 3 call\(s\) without a result/,
    );
  });
});
