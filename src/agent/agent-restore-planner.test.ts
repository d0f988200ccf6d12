import { describe, expect, it, vi } from 'vitest';
import type { ColonyEvent } from '../events/event-types.js';
import type { ScriptedTurn } from '../model/testing/scripted-language-model.js';
import { createMemoryEventStore } from '../store/events/memory-event-store.js';
import { runAgent, type AgentOutcome } from './agent-loop.js';
import { endingCallSucceeded, interruptedAnswer, type AgentRestore } from './agent-restore.js';
import { AGENT_ID, capturingModel, countingTools, recordStart, restartedLog, SYSTEM_PROMPT, TASK, testInbox, testRecorder, UNTIL_THERE } from './testing/agent-restart.js';
import { rebuildConversation } from './conversation-rebuild.js';

const call = (id: string, name: string, input: Record<string, unknown>) => ({ id, name, input });
const handoff = (taskId: string, status: string): string => `Handoff from task ${taskId} "Build ${taskId}"\nstatus: ${status}`;

/** A planner's first life, stopped by SIGKILL while it waits for its open children: the log keeps what was flushed. */
async function plannerKilledWhileWaiting(turns: ScriptedTurn[], openChildren: number, firstMessage: boolean): Promise<ColonyEvent[]> {
  const { tools } = countingTools();
  const store = createMemoryEventStore();
  const recorder = testRecorder(store);
  const inbox = testInbox();
  inbox.open(openChildren);
  if (firstMessage) inbox.post({ fromTaskId: 'task-a', content: handoff('task-a', 'done'), inboxSeq: 11 });
  recordStart(recorder, tools);
  void runAgent({ model: capturingModel(turns), tools, systemPrompt: SYSTEM_PROMPT, task: TASK, recorder, maxSteps: 10, inbox });
  await vi.waitFor(() => expect(recorder.trail.slice(-2)).toEqual(['agent.waiting', 'flush']), UNTIL_THERE);
  return await recorder.durable();
}

/** The planner's next life over `events`, with an inbox whose children are still open. */
function restoredPlanner(events: readonly ColonyEvent[], turns: ScriptedTurn[], openChildren: number, restore: Partial<AgentRestore> = {}) {
  const { tools, runs } = countingTools();
  const log = restartedLog(createMemoryEventStore, events);
  const recorder = testRecorder(log);
  const model = capturingModel(turns);
  const inbox = testInbox();
  inbox.open(openChildren);
  const conversation = rebuildConversation(events);
  const outcome: Promise<AgentOutcome> = runAgent({
    model,
    tools,
    systemPrompt: SYSTEM_PROMPT,
    task: TASK,
    recorder,
    maxSteps: 10,
    inbox,
    restore: { conversation, attempt: 2, answerInterrupted: async (each) => interruptedAnswer(each), ...restore },
  });
  return { log, recorder, model, inbox, conversation, outcome, runs };
}

describe('runAgent restoring a planner', () => {
  it('goes back to waiting for its children without a model call, then takes the handoff in and goes on', async () => {
    const durable = await plannerKilledWhileWaiting(
      [{ toolCalls: [call('c1', 'echo', { text: 'publish task-b' })] }, { text: 'Waiting for 1 handoff (task task-b).' }],
      2,
      true,
    );
    const next = restoredPlanner(durable, [{ toolCalls: [call('c2', 'finish', { summary: 'all landed' })] }], 1);
    expect([...next.conversation.receivedInboxSeqs]).toEqual([11]);
    await vi.waitFor(() => expect(next.recorder.trail).toEqual(['agent.restored', 'flush', 'agent.waiting', 'flush']), UNTIL_THERE);
    expect(next.model.seen).toEqual([]);

    next.inbox.post({ fromTaskId: 'task-b', content: handoff('task-b', 'done'), inboxSeq: 12 });
    expect(await next.outcome).toEqual({ status: 'ended', steps: 3 });
    expect(next.model.seen).toEqual([[...next.conversation.messages, { role: 'user', content: handoff('task-b', 'done') }]]);
    expect(next.recorder.trail).not.toContain('agent.nudged');
    const whole = rebuildConversation(await next.log.read({ agentId: AGENT_ID }));
    expect([...whole.receivedInboxSeqs]).toEqual([11, 12]);
    expect(whole.messages.at(-2)).toEqual({ role: 'assistant', text: '', toolCalls: [{ id: 'c2', name: 'finish', input: '{"summary":"all landed"}' }] });
  });

  it('keeps a planner that finished while a child was open waiting for the late handoff, and replans with it', async () => {
    const durable = await plannerKilledWhileWaiting([{ toolCalls: [call('c1', 'finish', { summary: 'early' })] }], 1, false);
    const conversation = rebuildConversation(durable);
    expect(endingCallSucceeded(conversation, ['finish'])).toBe(true);

    const next = restoredPlanner(durable, [{ toolCalls: [call('c2', 'finish', { summary: 'replanned' })] }], 1, { lastTurnEnded: true });
    await vi.waitFor(() => expect(next.recorder.trail).toContain('agent.waiting'), UNTIL_THERE);
    expect(next.model.seen).toEqual([]);
    next.inbox.post({ fromTaskId: 'task-late', content: handoff('task-late', 'failed'), inboxSeq: 3 });
    expect(await next.outcome).toEqual({ status: 'ended', steps: 2 });
    expect(next.model.seen[0]?.at(-1)).toEqual({ role: 'user', content: handoff('task-late', 'failed') });
    expect(next.runs).toEqual(['finish']);
  });

  it('ends at once, without a model call, when the last turn ended it and nothing is due', async () => {
    const durable = await plannerKilledWhileWaiting([{ toolCalls: [call('c1', 'finish', { summary: 'early' })] }], 1, false);
    const next = restoredPlanner(durable, [], 0, { lastTurnEnded: true });
    expect(await next.outcome).toEqual({ status: 'ended', steps: 1 });
    expect(next.model.seen).toEqual([]);
    expect(next.recorder.trail).toEqual(['agent.restored', 'flush']);
  });
});
