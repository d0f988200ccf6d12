import type { EventBody } from '../../events/event-types.js';
import type { AgentRole } from '../../events/event-fields.js';
import { handoffSchema, type HandoffStatus } from '../../events/handoff.js';
import type { EventStore } from '../../store/events/event-store.js';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';

/**
 * A run's log written event by event as colony writes one, for tests and benchmarks of what
 * reads logs: a root planner, sub-planners, workers that think, run commands, land commits and
 * hand off. The clock is the test's: `tick` moves it, every append is stamped with it.
 */
export interface ScriptedRun {
  readonly runId: string;
  /** Milliseconds since the epoch, as the next event will be stamped. */
  readonly now: number;
  tick(ms: number): void;
  append(agentId: string, body: EventBody): void;
  startRun(title: string): void;
  endRun(status: string): void;
  /** Publishes a task (recorded by the system) and starts an agent on it. */
  startAgent(agentId: string, role: AgentRole, taskId: string, title: string, parent: { agentId: string; taskId: string } | null): void;
  /** One model call and one tool call: `output` is what the tool said. */
  step(agentId: string, step: number, tool: string, input: Record<string, unknown>, output: string, ok?: boolean): void;
  land(agentId: string, commit: string, files: readonly string[]): void;
  handOff(agentId: string, taskId: string, parentTaskId: string | null, status: HandoffStatus, summary: string, steps: number): void;
}

export const SCRIPT_T0 = Date.UTC(2026, 10, 30, 9, 0, 0);

export function scriptRun(store: EventStore, clock: { now: number }, runId = 'run-scripted'): ScriptedRun {
  const append = (agentId: string, body: EventBody): void => {
    store.append({ ...body, runId, agentId });
  };
  const usage = { inputTokens: 900, outputTokens: 100, cachedInputTokens: 0 };
  return {
    runId,
    get now() {
      return clock.now;
    },
    tick(ms) {
      clock.now += ms;
    },
    append,
    startRun(title) {
      append('system', { type: 'run.started', data: { mode: 'run', repo: '/srv/project', model: 'sim', title } });
    },
    endRun(status) {
      append('system', { type: 'run.ended', data: { status, durationMs: clock.now - SCRIPT_T0 } });
    },
    startAgent(agentId, role, taskId, title, parent) {
      const kind = role === 'worker' ? 'worker' : 'planner';
      append('system', { type: 'task.created', data: { taskId, parentTaskId: parent?.taskId ?? null, kind, title, scope: null, retryOf: null } });
      append('system', { type: 'task.claimed', data: { taskId, kind, attempt: 1, holder: 'runner' } });
      append(agentId, {
        type: 'agent.started',
        data: { role, taskId, title, model: 'sim', systemPrompt: 'You are a colony agent.', task: `Task: ${title}`, tools: ['read_file', 'run_command'], parentAgentId: parent?.agentId ?? null },
      });
      if (role === 'worker') append(agentId, { type: 'workspace.created', data: { path: `/srv/workspaces/${agentId}`, branch: `colony/${agentId}`, baseCommit: 'a'.repeat(40), durationMs: 20 } });
    },
    step(agentId, step, tool, input, output, ok = true) {
      const callId = `${agentId}-call-${step}`;
      const text = JSON.stringify(input);
      append(agentId, { type: 'model.requested', data: { step, model: 'sim', messages: step * 2, chars: 4000 } });
      append(agentId, {
        type: 'model.responded',
        data: { step, text: `Step ${step}: ${tool}`, toolCalls: [{ id: callId, name: tool, input: text }], finishReason: 'tool-calls', usage, costUsd: 0.001, durationMs: 40, attempts: 1 },
      });
      append(agentId, { type: 'tool.started', data: { step, callId, name: tool, input: text } });
      append(agentId, { type: 'tool.ended', data: { step, callId, name: tool, ok, output, durationMs: 30 } });
    },
    land(agentId, commit, files) {
      append(agentId, { type: 'merge.landed', data: { commit, mainBefore: 'b'.repeat(40), attempts: 1, files: [...files], durationMs: 15 } });
    },
    handOff(agentId, taskId, parentTaskId, status, summary, steps) {
      const handoff = handoffSchema.parse({ status, summary, notes: [`notes of ${taskId}`], concerns: status === 'done' ? [] : [`${taskId} needs another look`] });
      append(agentId, { type: 'handoff.submitted', data: { taskId, handoff } });
      append(agentId, { type: 'agent.ended', data: { status, steps, reason: 'handoff submitted' } });
      append('system', { type: 'handoff.delivered', data: { taskId, parentTaskId, status } });
    },
  };
}

/** The root planner of a run opened with `openScriptedRun`. */
export const SCRIPTED_ROOT = { agentId: 'planner-root', taskId: 'task-root' } as const;

/**
 * A run in a fresh in-memory log on the test's clock, started, with its root planner
 * (`SCRIPTED_ROOT`) at work: what most tests of a view begin with.
 */
export function openScriptedRun(title = 'Build the parser'): { store: EventStore; run: ScriptedRun; clock: { now: number } } {
  const clock = { now: SCRIPT_T0 };
  const store = createMemoryEventStore({ now: () => clock.now });
  const run = scriptRun(store, clock);
  run.startRun(title);
  run.startAgent(SCRIPTED_ROOT.agentId, 'root-planner', SCRIPTED_ROOT.taskId, title, null);
  return { store, run, clock };
}
