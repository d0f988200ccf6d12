import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ColonyEvent } from '../events/event-types.js';
import { createChatModel } from '../model/providers/language-model-chat.js';
import type { ToolCall } from '../model/messages.js';
import { createSimLanguageModel } from '../sim/sim-language-model.js';
import { formatHandoffMessage, goalWith, PASSING_TESTS, range } from '../sim/testing/planner-tools.js';
import { DEFAULT_SIM_OPTIONS } from '../sim/sim-options.js';
import { copyExample, createToolExecutor, EXAMPLE_DIR, projectTestsPass, removeExampleCopies, WORKER_TOOL_NAMES } from '../sim/testing/tool-executor.js';
import { createMemoryEventStore } from '../store/events/memory-event-store.js';
import type { AnyTool, ToolResult } from '../tools/tool.js';
import { runAgent, type AgentInbox, type AgentOutcome, type InboxDelivery } from './agent-loop.js';
import { interruptedAnswer } from './agent-restore.js';
import { AGENT_ID, recordStart, restartedLog, SYSTEM_PROMPT, testRecorder } from './testing/agent-restart.js';
import { rebuildConversation } from './conversation-rebuild.js';

const padTask = readFileSync(join(EXAMPLE_DIR, 'tasks/01-pad.md'), 'utf8');

afterEach(removeExampleCopies);

const simModel = () => createChatModel(createSimLanguageModel(DEFAULT_SIM_OPTIONS), { spec: 'sim' });

/** Where colony is killed: in the `nth` call (the first by default) of this tool, after its effect or before it. */
interface StopPoint {
  readonly tool: string;
  readonly afterEffect: boolean;
  readonly nth?: number;
}

/** Whether colony was killed yet; `reached` settles when it is. */
interface KillSwitch {
  stopped: boolean;
  readonly reached: Promise<void>;
  readonly kill: () => void;
}

function killSwitch(): KillSwitch {
  let kill = (): void => undefined;
  const reached = new Promise<void>((resolve) => (kill = resolve));
  return { stopped: false, reached, kill: () => kill() };
}

/** A tool that answers through `answer`, except its call at `stop`, which never returns (colony is killed in it). */
function stoppableTool(name: string, stop: StopPoint, state: KillSwitch, answer: (call: ToolCall) => ToolResult): AnyTool {
  let calls = 0;
  return {
    name,
    description: `${name}, as the sim's tests carry it out`,
    parameters: z.record(z.string(), z.unknown()),
    execute: async (input: Record<string, unknown>, context) => {
      const call = { id: context.callId, name, input: JSON.stringify(input) };
      calls += 1;
      if (state.stopped || name !== stop.tool || calls !== (stop.nth ?? 1)) return answer(call);
      state.stopped = true;
      if (stop.afterEffect) answer(call);
      state.kill();
      return new Promise<ToolResult>(() => undefined);
    },
  };
}

/** Runs a first life until colony is killed at `stop`, then a second from the durable log; returns the second's outcome. */
async function twoLives(tools: AnyTool[], task: string, state: KillSwitch, inbox?: () => AgentInbox) {
  const store = createMemoryEventStore();
  const recorder = testRecorder(store);
  recordStart(recorder, tools, task);
  const first = runAgent({ model: simModel(), tools, systemPrompt: SYSTEM_PROMPT, task, recorder, maxSteps: 40, ...(inbox === undefined ? {} : { inbox: inbox() }) });
  await Promise.race([
    state.reached,
    first.then((outcome) => Promise.reject(new Error(`the first life ended before colony was killed: ${JSON.stringify(outcome)}`))),
  ]);
  const durable = await recorder.durable();
  const log = restartedLog(createMemoryEventStore, durable);
  const restore = { conversation: rebuildConversation(durable), attempt: 2, answerInterrupted: async (call: ToolCall) => interruptedAnswer(call) };
  const second = { log, recorder: testRecorder(log), inbox: inbox?.() };
  const outcome: Promise<AgentOutcome> = runAgent({
    model: simModel(),
    tools,
    systemPrompt: SYSTEM_PROMPT,
    task,
    recorder: second.recorder,
    maxSteps: 40,
    restore,
    ...(second.inbox === undefined ? {} : { inbox: second.inbox }),
  });
  return { durable, second, outcome };
}

const callsAfter = (events: readonly ColonyEvent[], from: number, name: string) =>
  events.slice(from).flatMap((event) => (event.type === 'tool.started' && event.data.name === name ? [event.data] : []));

describe('the sim worker restored after colony was killed in one of its calls', () => {
  it.each<StopPoint & { readonly repeats: string }>([
    { tool: 'write_file', afterEffect: false, repeats: 'writes the module again' },
    { tool: 'run_command', afterEffect: false, repeats: 'runs the tests again' },
    { tool: 'merge_to_main', afterEffect: true, repeats: 'merges again, finding main already has it' },
    { tool: 'submit_handoff', afterEffect: false, repeats: 'submits its handoff again' },
  ])('carries on when $tool was interrupted: it $repeats and hands off done', async (stop) => {
    const dir = copyExample();
    // A merge that landed before colony was killed: asked again, main already has it.
    const execute = createToolExecutor(dir, {
      onMerge: (attempt) => (attempt === 1 ? { content: 'merged into main as abc123', isError: false } : { content: 'nothing to merge: main already has these changes', isError: false }),
    });
    const handoffs: unknown[] = [];
    const state = killSwitch();
    const tools = WORKER_TOOL_NAMES.map((name) =>
      stoppableTool(name, stop, state, (call) => {
        const result = execute(call);
        if (result.isError) return { ok: false, error: result.content };
        if (name !== 'submit_handoff') return { ok: true, output: result.content };
        handoffs.push(JSON.parse(call.input));
        return { ok: true, output: result.content, endsAgent: true };
      }),
    );
    const { durable, second, outcome } = await twoLives(tools, padTask, state);
    expect(await outcome).toMatchObject({ status: 'ended' });

    const interrupted = rebuildConversation(durable).interrupted;
    expect(interrupted.map(({ call }) => call.name)).toEqual([stop.tool]);
    const events = await second.log.read({ agentId: AGENT_ID });
    const answer = events.slice(durable.length).find((event) => event.type === 'tool.ended');
    expect(answer?.data).toMatchObject({ callId: interrupted[0]?.call.id, ok: false, output: expect.stringMatching(/^error: interrupted by a restart/) });
    // The interrupted call is made again by the sim itself, in a later answer of its own.
    const [first] = interrupted;
    const again = callsAfter(events, durable.length, stop.tool);
    expect(again.some((call) => call.input === first?.call.input && call.step > first.step)).toBe(true);
    expect(handoffs).toHaveLength(1);
    expect(handoffs[0]).toMatchObject({ status: 'done' });
    if (stop.tool === 'merge_to_main') expect(String((handoffs[0] as { summary: string }).summary)).toContain('main already had all of it');
    expect(projectTestsPass(dir)).toBe(true);
  });
});

/** The planner's world: tasks it created, and children that hand off done as soon as it waits for them. */
function plannerWorld(stop: StopPoint, state: KillSwitch) {
  const tasks: { readonly id: string; readonly title: string }[] = [];
  const unread: InboxDelivery[] = [];
  const handedOff = new Set<string>();
  const finishes: Record<string, unknown>[] = [];
  const inbox: AgentInbox = {
    take: async () => unread.splice(0),
    pending: async () => ({ unread: unread.length, openChildren: tasks.length - handedOff.size }),
    wait: async () => {
      for (const task of tasks.filter((each) => !handedOff.has(each.id))) {
        handedOff.add(task.id);
        unread.push({ fromTaskId: task.id, content: formatHandoffMessage(task, { status: 'done', summary: `${task.title}: done.` }) });
      }
    },
  };
  const answers: Record<string, (input: Record<string, unknown>) => ToolResult> = {
    create_task: (input) => {
      const task = { id: `task_${tasks.length + 1}`, title: String(input.title) };
      tasks.push(task);
      return { ok: true, output: `Created task ${task.id}: ${task.title}` };
    },
    write_scratchpad: (input) => ({ ok: true, output: `Scratchpad saved (${String(input.content).length} characters).` }),
    run_command: () => ({ ok: true, output: PASSING_TESTS }),
    finish: (input) => (finishes.push(input), { ok: true, output: 'Finished.', endsAgent: true }),
  };
  const tools = Object.entries(answers).map(([name, answer]) =>
    stoppableTool(name, stop, state, (call) => answer(JSON.parse(call.input) as Record<string, unknown>)),
  );
  return { tools, tasks, finishes, inbox };
}

describe('the sim planner restored after colony was killed in a create_task', () => {
  it.each([
    {
      afterEffect: true,
      titles: ['t0', 't1', 't2', 't1'],
      reported: ['task_1', 'task_3', 'task_4'],
      what: 'the task was created: it publishes the module again and ignores the handoff of the task it never saw created',
    },
    { afterEffect: false, titles: ['t0', 't2', 't1'], reported: ['task_1', 'task_2', 'task_3'], what: 'no task was created: it publishes the module after the others' },
  ])('keeps track of its modules when $what', async ({ afterEffect, titles, reported }) => {
    const state = killSwitch();
    // The second create_task of its first answer is the one colony is killed in.
    const world = plannerWorld({ tool: 'create_task', afterEffect, nth: 2 }, state);
    const { outcome } = await twoLives(world.tools, goalWith(range('src/text/t', 3)), state, () => world.inbox);
    expect(await outcome).toMatchObject({ status: 'ended' });
    expect(world.tasks.map((task) => task.title)).toEqual(titles.map((name) => `Build src/text/${name}.js`));
    expect(world.finishes).toHaveLength(1);
    expect(world.finishes[0]).toMatchObject({ status: 'done', summary: expect.stringContaining('3 of 3 modules of the goal landed; 3 tasks published') });
    const notes = (world.finishes[0]?.notes ?? []) as string[];
    expect(notes.filter((note) => note.startsWith('task ')).map((note) => note.split(' ')[1])).toEqual(reported);
  });
});
