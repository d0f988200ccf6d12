import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runAgent } from '../src/agent/agent-loop.js';
import { type AgentRecorder } from '../src/agent/types.js';
import { modelRespondedInput, toolEndedInput, toolStartedInput } from '../src/store/testing/event-store-fixtures.js';
import { createGroupFlush } from '../src/store/events/group-flush.js';
import { openSqliteEventStore } from '../src/store/sqlite/sqlite-event-store.js';
import { resolveModel } from '../src/model/registry.js';
import { SIM_MODEL_FACTORY } from '../src/sim/sim-model-factory.js';
import { runRunSession } from '../src/orchestrator/session/run-session.js';
import { chaosProblems } from '../test/testing/chaos-checks.js';
import { createExampleRepository } from '../test/testing/example-repository.js';
import { runWithKills } from '../test/testing/chaos-run.js';
import { echoModel, echoTool } from './echo-agent.js';
import { median, repeat, type BenchRow, type BenchSection, type BenchSettings } from './bench-row.js';

/**
 * What durability costs, measured the way a run pays for it: every agent turn records the
 * model's answer and the call's start and makes them durable before the call runs, the agents
 * that ask at once sharing one synced commit (durable batching). The same work with the log's
 * syncs off (`durable: false`, a switch that exists for this comparison only) shows the price.
 */
export async function benchDurability(settings: BenchSettings): Promise<BenchSection> {
  const rounds = settings.runs ?? 5;
  const rows: BenchRow[] = [];
  const events = { on: median(await repeat(rounds, () => eventsPerSecond(true))), off: median(await repeat(rounds, () => eventsPerSecond(false))) };
  rows.push(
    { name: 'event log, durable batching (synced commits shared by the agents that ask at once)', value: events.on, unit: 'events/s', note: `median of ${rounds}; ${AGENTS} agents, 3 events per turn, the first two made durable before the tool call` },
    { name: 'event log, durability off (no syncs)', value: events.off, unit: 'events/s', note: `median of ${rounds}; the same agents, appends and flushes` },
    { name: 'event log: durable against off', value: (events.on / events.off) * 100, unit: '% of off', target: '≥ 80%' },
  );
  const calls = { on: median(await repeat(rounds, () => toolCallsPerSecond(true))), off: median(await repeat(rounds, () => toolCallsPerSecond(false))) };
  rows.push(
    { name: 'tool calls through the agent loop, durable batching', value: calls.on, unit: 'tool calls/s', note: `median of ${rounds}; ${AGENTS} agents at once × ${STEPS} steps, a trivial tool, SQLite log` },
    { name: 'tool calls through the agent loop, durability off', value: calls.off, unit: 'tool calls/s', note: `median of ${rounds}; the same loop` },
    { name: 'tool calls: durable against off', value: (calls.on / calls.off) * 100, unit: '% of off', target: '≥ 80%' },
  );
  const runs = { on: median(await repeat(rounds, () => wholeRun(true))), off: median(await repeat(rounds, () => wholeRun(false))) };
  rows.push(
    { name: 'a whole run (toolbox, sim at zero latency, 4 workers), durable batching', value: runs.on, unit: 'tool calls/s', note: `median of ${rounds}; every command, merge and handoff real, sandboxed` },
    { name: 'a whole run, durability off', value: runs.off, unit: 'tool calls/s', note: `median of ${rounds}; the same run` },
    { name: 'a whole run: durable against off', value: (runs.on / runs.off) * 100, unit: '% of off', target: '≥ 80%' },
  );
  return { rows };
}

/** Tool calls per second of a whole `colony run` of the small example, its stores durable or not. */
async function wholeRun(durable: boolean): Promise<number> {
  const repo = createExampleRepository('toolbox');
  try {
    const model = resolveModel('sim?seed=3', { env: {} }, { sim: SIM_MODEL_FACTORY });
    if (!model.ok) throw new Error(model.error);
    let toolCalls = 0;
    const started = performance.now();
    const result = await runRunSession({
      repoDir: repo.dir,
      workerModel: model.model,
      plannerModel: model.model,
      settings: {
        goalPath: join(repo.dir, 'GOAL.md'),
        workers: 4,
        workerMaxSteps: 100,
        plannerMaxSteps: 1_000,
      },
      durable,
      onEvent: (event) => {
        if (event.type === 'tool.ended') toolCalls += 1;
      },
    });
    if (!result.ok || result.status !== 'done') throw new Error(`the run did not end done: ${result.ok ? result.status : result.error}`);
    return toolCalls / ((performance.now() - started) / 1000);
  } finally {
    repo.cleanup();
  }
}

/**
 * The promise itself, at a larger scale than the test suite: the large example killed twenty
 * times and resumed, checked for anything lost or done twice.
 */
export async function benchKilledRun(): Promise<BenchSection> {
  return killedRun();
}

const TURNS = 3_000;
const AGENTS = 50;
const STEPS = 60;

/**
 * Events per second of many agents at once, each making its turn's first two events durable
 * before its tool call, as the agent loop does, through durable batching.
 */
async function eventsPerSecond(durable: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'colony-bench-durable-'));
  const store = openSqliteEventStore(join(dir, 'colony.db'), { durable });
  const flush = createGroupFlush(store);
  try {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: AGENTS }, async (_, agentIndex) => {
        const subject = { runId: 'run-bench', agentId: `agent-${agentIndex}` };
        for (let turn = 0; turn < TURNS / AGENTS; turn += 1) {
          store.append(modelRespondedInput(subject, turn, 'I will read the file and then change the function it defines.'));
          store.append(toolStartedInput(subject, turn));
          await flush();
          store.append(toolEndedInput(subject, turn, 'export function pad(text, width) {\n  return String(text).padStart(width);\n}\n'));
        }
      }),
    );
    await store.flush();
    return (TURNS * 3) / ((performance.now() - started) / 1000);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Tool calls per second of many agents in one process, each flushing before every call. */
async function toolCallsPerSecond(durable: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'colony-bench-durable-loop-'));
  const store = openSqliteEventStore(join(dir, 'colony.db'), { durable });
  const echo = echoTool;
  const model = echoModel;
  const flush = createGroupFlush(store);
  try {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: AGENTS }, (_, agentIndex) => {
        const recorder: AgentRecorder = {
          record: (body) => store.append({ ...body, runId: 'bench', agentId: `agent-${agentIndex}` }),
          flush,
        };
        return runAgent({ model, tools: [echo], systemPrompt: 'bench', task: 'bench', recorder, maxSteps: STEPS });
      }),
    );
    return (AGENTS * STEPS) / ((performance.now() - started) / 1000);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const CHAOS_KILLS = 20;

/** The larger example killed many times and resumed: how long it took, and that nothing was lost. */
async function killedRun(): Promise<BenchSection> {
  const outcome = await runWithKills({ example: 'stdlib', model: 'sim?seed=21&latency=40..160', workers: 4, kills: CHAOS_KILLS, seed: 9, runFlags: ['--no-shared-deps'], finishTimeoutMs: 900_000 });
  try {
    const problems = await chaosProblems(outcome.repo.dir, outcome.stateDir, outcome.runId);
    const leftovers = [...outcome.kills.flatMap((kill) => kill.leftovers), ...outcome.leftoversAtEnd];
    const phases = new Map<string, number>();
    for (const kill of outcome.kills) phases.set(kill.landedAfter, (phases.get(kill.landedAfter) ?? 0) + 1);
    const details = [
      `The stdlib example (169 modules, nested sub-planners) on \`sim?seed=21&latency=40..160\` with 4 workers, SIGKILLed ${outcome.kills.length} times and resumed each time, then let finish (exit code ${String(outcome.exitCode)}).`,
      '',
      `Where the kills landed (the newest event at the moment): ${[...phases].map(([phase, count]) => `${phase} ×${count}`).join(', ')}.`,
      '',
      problems.length === 0 ? 'Every invariant held: every task closed with one delivered handoff, no commit landed twice, every commit a handoff names is on main, the log has no gap.' : `Problems: ${problems.join('; ')}`,
      leftovers.length === 0 ? 'Nothing of the run outlived a kill or the run: no process of its uids, no cgroup holding a process.' : `Left behind: ${leftovers.join('; ')}`,
    ].join('\n');
    return {
      rows: [
        { name: `stdlib run killed ${outcome.kills.length} times and resumed: wall time`, value: outcome.durationMs / 1000, unit: 's', note: `exit code ${String(outcome.exitCode)}` },
        { name: 'invariants broken after the kills', value: problems.length + leftovers.length, unit: 'problems', target: '0' },
      ],
      details,
    };
  } finally {
    outcome.repo.cleanup();
  }
}
