import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runAgent } from '../src/agent/agent-loop.js';
import { type AgentRecorder } from '../src/agent/types.js';
import type { ChatModel, ModelResult } from '../src/model/chat-model.js';
import { resolveModel } from '../src/model/registry.js';
import { SIM_MODEL_FACTORY } from '../src/sim/sim-model-factory.js';
import { runWorkSession } from '../src/orchestrator/session/work-session.js';
import { openSqliteEventStore } from '../src/store/sqlite/sqlite-event-store.js';
import { echoModel, echoTool } from './echo-agent.js';
import type { BenchRow } from './bench-row.js';

const EXAMPLE = new URL('../examples/text-kit/', import.meta.url);

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Wraps a model so the CPU spent inside it (the simulated model's own thinking) can be subtracted. */
function measuredModel(model: ChatModel): ChatModel & { cpuMs: number } {
  const measured = {
    spec: model.spec,
    cpuMs: 0,
    async call(...args: Parameters<ChatModel['call']>): Promise<ModelResult> {
      const before = cpuMs();
      const result = await model.call(...args);
      measured.cpuMs += cpuMs() - before;
      return result;
    },
  };
  return measured;
}

/** The agent loop and the event log alone: a model that always asks for one trivial tool call. */
async function loopOnly(): Promise<BenchRow> {
  const dir = mkdtempSync(join(tmpdir(), 'colony-bench-loop-'));
  const store = openSqliteEventStore(join(dir, 'colony.db'));
  const echo = echoTool;
  const model = echoModel;
  const agents = 200;
  const steps = 50;
  const run = async (agentIndex: number) => {
    const recorder: AgentRecorder = {
      record: (body) => store.append({ ...body, runId: 'bench', agentId: `agent-${agentIndex}` }),
      flush: () => store.flush(),
    };
    await runAgent({ model, tools: [echo], systemPrompt: 'bench', task: 'bench', recorder, maxSteps: steps });
  };
  await run(-1);
  const before = cpuMs();
  for (let index = 0; index < agents; index += 1) await run(index);
  const perCall = (cpuMs() - before) / (agents * steps);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    name: 'agent loop + event log (SQLite), trivial tool',
    value: perCall * 1000,
    unit: 'µs CPU/call',
    target: '< 2,000 µs',
    note: `${agents} agents × ${steps} steps in one process; every call validated, recorded (4 events) and flushed`,
  };
}

/** A whole worker per task of the example on the simulated model at zero latency. */
async function fullWorker(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'colony-bench-worker-'));
  const repo = join(dir, 'text-kit');
  cpSync(EXAMPLE, repo, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@colony.invalid', ...args], { cwd: repo });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  const resolved = resolveModel('sim?seed=3', { env: {} }, { sim: SIM_MODEL_FACTORY });
  if (!resolved.ok) throw new Error(resolved.error);
  const model = measuredModel(resolved.model);
  let toolCalls = 0;
  // CPU between tool.started and tool.ended is the tool's own work (files, commands, git);
  // CPU from agent.started to the end of its submit_handoff call is the agent's; the rest is
  // the task's set-up and tear-down (workspace, checkout, store).
  let toolCpu = 0;
  let agentCpu = 0;
  let mark = 0;
  let agentMark = 0;
  const tasks = readdirSync(join(repo, 'tasks')).filter((name) => name.endsWith('.md')).sort();
  const wallStart = performance.now();
  const before = cpuMs();
  for (const name of tasks) {
    const result = await runWorkSession({
      repoDir: repo,
      taskPath: join(repo, 'tasks', name),
      model,
      maxSteps: 60,
      onEvent: (event) => {
        if (event.type === 'tool.started') mark = cpuMs();
        if (event.type === 'tool.ended') {
          toolCalls += 1;
          toolCpu += cpuMs() - mark;
          // The agent's part ends with its handoff; checking and removing its workspace is tear-down.
          if (event.data.name === 'submit_handoff') agentCpu += cpuMs() - agentMark;
        }
        if (event.type === 'agent.started') agentMark = cpuMs();
      },
    });
    if (!result.ok || result.handoff.status !== 'done') throw new Error(`the bench worker did not finish ${name}`);
  }
  const totalCpu = cpuMs() - before;
  const loopCpu = agentCpu - toolCpu - model.cpuMs;
  const wall = performance.now() - wallStart;
  rmSync(dir, { recursive: true, force: true });
  return [
    {
      name: 'whole worker (sim, latency 0): harness CPU per tool call',
      value: loopCpu / toolCalls,
      unit: 'ms CPU/call',
      target: '< 2 ms',
      note: `${tasks.length} tasks, ${toolCalls} tool calls; the agent's CPU less the model's and the tools' own work`,
    },
    {
      name: 'whole worker: tools\' own work (files, spawning commands and git)',
      value: toolCpu / toolCalls,
      unit: 'ms CPU/call',
      note: 'in this process; the commands themselves run in child processes and are not counted',
    },
    {
      name: 'whole worker: set-up and tear-down per task',
      value: (totalCpu - agentCpu) / tasks.length,
      unit: 'ms CPU/task',
      note: 'checks, workspace (git worktree add, status, remove), store open/close, checkout update',
    },
    {
      name: 'whole worker (sim, latency 0): wall time',
      value: wall / toolCalls,
      unit: 'ms/call',
      note: 'everything included: node --test runs, git worktree add, rebase and update-ref',
    },
  ];
}

export async function benchToolCallOverhead(): Promise<BenchRow[]> {
  return [await loopOnly(), ...(await fullWorker())];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const row of await benchToolCallOverhead()) console.log(row);
}
