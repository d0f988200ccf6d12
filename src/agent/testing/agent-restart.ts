import { z } from 'zod';
import type { ColonyEvent, EventBody, RecordedEvent } from '../../events/event-types.js';
import type { ChatModel } from '../../model/chat-model.js';
import { createChatModel } from '../../model/providers/language-model-chat.js';
import type { Message } from '../../model/messages.js';
import { createScriptedLanguageModel, type ScriptedTurn } from '../../model/testing/scripted-language-model.js';
import type { AnyTool } from '../../tools/tool.js';
import type { AgentInbox, InboxDelivery } from '../agent-loop.js';
import type { AgentRecorder } from '../types.js';

/**
 * What the restart tests use to stop an agent the way SIGKILL does and start it again from its
 * log: a recorder over a real event store that knows what was made durable, a scripted model
 * that keeps every conversation it was sent, tools that count their runs, an inbox.
 */

/** The part of the event store the tests use; the store itself lives above this layer. */
export interface AgentLog {
  append(input: EventBody & { readonly runId: string; readonly agentId: string }): RecordedEvent;
  flush(): Promise<void>;
  read(query: { readonly agentId: string }): Promise<ColonyEvent[]>;
}

export const AGENT_ID = 'worker-restart';

/** How long `vi.waitFor` may wait for a loop to get somewhere: a ceiling for a slow machine, not a measurement. */
export const UNTIL_THERE = { timeout: 10_000, interval: 5 };

export interface TestRecorder extends AgentRecorder {
  /** The agent's events that a SIGKILL now would leave in the log: those up to the last flush. */
  durable(): Promise<ColonyEvent[]>;
  /** What this recorder was asked to do, in order: event types and `flush`. */
  readonly trail: string[];
}

/** Raised by a recorder told to die after an event, as the harness would mid-loop. */
export const KILLED = 'colony was killed here';

/** Records the agent's events in `log`; with `killAfter`, throws KILLED right after recording a matching event. */
export function testRecorder(log: AgentLog, killAfter?: (event: EventBody) => boolean): TestRecorder {
  // Whatever the log already holds survived the last restart: it is all durable. What was
  // recorded since the last flush began is not.
  const unflushed = new Set<string>();
  const trail: string[] = [];
  return {
    trail,
    record(body) {
      unflushed.add(log.append({ ...body, runId: 'run-1', agentId: AGENT_ID }).id);
      trail.push(body.type);
      if (killAfter?.(body) === true) throw new Error(KILLED);
    },
    async flush() {
      const flushing = [...unflushed];
      trail.push('flush');
      await log.flush();
      for (const id of flushing) unflushed.delete(id);
    },
    durable: async () => (await log.read({ agentId: AGENT_ID })).filter((event) => !unflushed.has(event.id)),
  };
}

/** A new log holding only `events`, as colony finds it when it starts again. */
export function restartedLog(createLog: () => AgentLog, events: readonly RecordedEvent[]): AgentLog {
  const log = createLog();
  for (const { v: _v, id: _id, ...input } of events) log.append(input);
  return log;
}

export const SYSTEM_PROMPT = 'You are a test agent.';
export const TASK = 'Do the thing.';

/** What the orchestrator records before it runs the loop. */
export function recordStart(recorder: AgentRecorder, tools: readonly AnyTool[], task = TASK): void {
  recorder.record({
    type: 'agent.started',
    data: { role: 'worker', taskId: 'task-1', title: 'Thing', model: 'scripted', systemPrompt: SYSTEM_PROMPT, task, tools: tools.map((tool) => tool.name), attempt: 1 },
  });
}

/** Stands for a model call still out when colony was killed: it never answers. */
export const NEVER_ANSWERS = 'never answers';

/** A scripted model behind the real ChatModel adapter, keeping a copy of every conversation it is sent. */
export function capturingModel(turns: readonly (ScriptedTurn | typeof NEVER_ANSWERS)[]): ChatModel & { readonly seen: Message[][] } {
  const answered = turns.filter((turn): turn is ScriptedTurn => turn !== NEVER_ANSWERS);
  const inner = createChatModel(createScriptedLanguageModel(answered), { spec: 'scripted' });
  const seen: Message[][] = [];
  return {
    spec: 'scripted',
    seen,
    call(request, options) {
      seen.push([...request.messages]);
      if (turns[seen.length - 1] === NEVER_ANSWERS) return new Promise(() => undefined);
      return inner.call(request, options);
    },
  };
}

/** Tools that note every run: `echo`, `finish` (ends the agent), and `slow_command`, which never returns. */
export function countingTools(): { readonly tools: AnyTool[]; readonly runs: string[] } {
  const runs: string[] = [];
  const tools: AnyTool[] = [
    {
      name: 'echo',
      description: 'Echoes text.',
      parameters: z.object({ text: z.string() }),
      execute: async (input: { text: string }) => (runs.push(`echo ${input.text}`), { ok: true, output: `echo: ${input.text}` }),
    },
    {
      name: 'finish',
      description: 'Ends the agent.',
      parameters: z.object({ summary: z.string() }),
      execute: async () => (runs.push('finish'), { ok: true, output: 'finished', endsAgent: true }),
    },
    {
      name: 'slow_command',
      description: 'Runs a command that outlives the harness.',
      parameters: z.object({ command: z.string() }),
      execute: (input: { command: string }) => (runs.push(`slow_command ${input.command}`), new Promise(() => undefined)),
    },
  ];
  return { tools, runs };
}

/** A planner's inbox the test fills: messages carry inbox seqs; open children are set by the test. */
export function testInbox(): AgentInbox & { post(delivery: InboxDelivery, closesChild?: boolean): void; open(children: number): void } {
  const queue: InboxDelivery[] = [];
  let openChildren = 0;
  const waiters: (() => void)[] = [];
  return {
    take: async () => queue.splice(0),
    pending: async () => ({ unread: queue.length, openChildren }),
    wait: (signal) =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
    post(delivery, closesChild = true) {
      queue.push(delivery);
      if (closesChild) openChildren -= 1;
      for (const wake of waiters.splice(0)) wake();
    },
    open(children) {
      openChildren = children;
    },
  };
}
