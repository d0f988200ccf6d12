import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runAgent, type AgentOutcome } from '../../src/agent/agent-loop.js';
import { type AgentRecorder } from '../../src/agent/types.js';
import type { EventBody, EventData } from '../../src/events/event-types.js';
import type { Handoff } from '../../src/events/handoff.js';
import { startModelServer, type ModelServer } from '../../src/model/server/model-server.js';
import { createProviderGuards } from '../../src/model/resilience/provider-guard.js';
import { resolveModel } from '../../src/model/registry.js';
import { createSimLanguageModel } from '../../src/sim/sim-language-model.js';
import { parseSimSpec } from '../../src/sim/sim-options.js';
import { createSubmitHandoffTool } from '../../src/tools/submit-handoff-tool.js';
import { createWorkerFileTools } from '../../src/tools/worker-file-tools.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

/**
 * A hundred worker agents on the sim, served over real HTTP and called through the
 * openai-compatible adapter, while the server answers every request with a 429 for a while.
 * The provider's gate must slow everyone down, agents whose retries run out must park rather
 * than fail, and every agent must still finish its task with nothing lost. Half the agents
 * retry inside the call and half do not (so a 429 parks them at once): two models of one
 * provider address, sharing its gate.
 */
const AGENTS = 100;
const STORM_MS = 2_500;

const TASK = `# Split a list into chunks

Add \`chunk\` to \`src/list/chunk.js\`, test it, re-export it from \`src/index.js\`, and make the tests pass.

\`\`\`colony-spec
${JSON.stringify({
  project: { test: 'node src/list/chunk.test.js', index: 'src/index.js' },
  modules: [
    {
      path: 'src/list/chunk.js',
      exports: [
        {
          name: 'chunk',
          params: ['items', 'size'],
          body: 'const chunks = [];\nfor (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));\nreturn chunks;',
          cases: [
            { args: [[1, 2, 3, 4, 5], 2], returns: [[1, 2], [3, 4], [5]] },
            { args: [[], 3], returns: [] },
          ],
        },
      ],
    },
  ],
})}
\`\`\`
`;

let server: ModelServer;
let base: string;

beforeAll(async () => {
  const sim = parseSimSpec('sim?seed=5&latency=2..10');
  if (!sim.ok) throw new Error(sim.error);
  server = await startModelServer({ model: createSimLanguageModel(sim.options) });
  base = mkdtempSync(join(tmpdir(), 'colony-storm-'));
});

afterAll(async () => {
  await server.close();
  rmSync(base, { recursive: true, force: true });
});

interface AgentRun {
  readonly dir: string;
  readonly events: EventBody[];
  readonly handoffs: Handoff[];
  outcome: AgentOutcome | null;
}

/** The payloads of one event type, in the order they were recorded by all agents together. */
function eventsOf<T extends EventBody['type']>(timeline: readonly EventBody[], type: T): EventData<T>[] {
  return timeline.filter((event) => event.type === type).map((event) => event.data as EventData<T>);
}

function count(run: AgentRun, type: EventBody['type']): number {
  return run.events.filter((event) => event.type === type).length;
}

describeRuns('a 429 storm', () => {
  it(`slows ${AGENTS} agents down, parks the ones whose retries run out, and loses none of them`, async () => {
    const guards = createProviderGuards({ gate: { initialLimit: 32 } });
    const modelFor = (maxAttempts: number) => {
      const resolved = resolveModel('openai-compatible:sim', {
        baseUrl: `${server.url}/v1`,
        env: {},
        providers: guards,
        retry: { maxAttempts, baseDelayMs: 50, maxDelayMs: 200 },
      });
      if (!resolved.ok) throw new Error(resolved.error);
      return resolved.model;
    };
    const [retrying, parkingAtOnce] = [modelFor(3), modelFor(1)];
    const timeline: EventBody[] = [];

    const runs: AgentRun[] = Array.from({ length: AGENTS }, (_, index) => {
      const dir = join(base, `agent-${index}`);
      mkdirSync(join(dir, 'src'), { recursive: true });
      writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
      writeFileSync(join(dir, 'src', 'index.js'), "export const kit = 'storm';\n");
      return { dir, events: [], handoffs: [], outcome: null };
    });
    const agents = runs.map(async (run, index) => {
      const recorder: AgentRecorder = {
        record: (event) => {
          run.events.push(event);
          timeline.push(event);
        },
        flush: () => undefined,
      };
      const tools = [...createWorkerFileTools(run.dir), createSubmitHandoffTool((handoff) => run.handoffs.push(handoff))];
      run.outcome = await runAgent({
        model: index % 2 === 0 ? retrying : parkingAtOnce,
        tools,
        systemPrompt: 'You are a worker. Do the task, test it, and hand off.',
        task: TASK,
        recorder,
        maxSteps: 30,
        parking: { firstDelayMs: 100, maxDelayMs: 1_000 },
      });
    });

    // The storm breaks once every agent is under way.
    while (server.requests.length < 150) await new Promise((resolve) => setTimeout(resolve, 5));
    server.storm({ status: 429, retryAfterSeconds: 1 }, STORM_MS);
    await Promise.all(agents);

    // Every agent ended normally, with its work done.
    expect(runs.map((run) => run.outcome?.status)).toEqual(runs.map(() => 'ended'));
    expect(runs.map((run) => run.handoffs.map((handoff) => handoff.status))).toEqual(runs.map(() => ['done']));
    expect(runs.filter((run) => !existsSync(join(run.dir, 'src', 'list', 'chunk.js')))).toEqual([]);
    expect(eventsOf(timeline, 'model.failed')).toEqual([]);

    // The storm happened, and the gate came down for it, then crept back up once it was over.
    const limited = server.requests.filter((request) => request.fault !== null);
    expect(limited.length).toBeGreaterThan(0);
    const changes = eventsOf(timeline, 'provider.limited');
    const firstCut = changes.findIndex((change) => change.to < change.from);
    const before = changes.slice(0, firstCut);
    // Before the storm the limit only grew, from 32.
    expect(before.every((change, index) => change.to === change.from + 1 && change.from === 32 + index)).toBe(true);
    expect(changes[firstCut]).toMatchObject({ from: 32 + before.length, reason: 'rate limited (HTTP 429)', holdMs: 1_000 });
    const cuts = changes.filter((change) => change.to < change.from);
    expect(cuts.every((change) => change.to === Math.floor(change.from / 2))).toBe(true);
    expect(cuts.length).toBeGreaterThanOrEqual(2);
    const lowestAt = changes.findLastIndex((change) => change.to < change.from);
    expect(changes.slice(lowestAt + 1).some((change) => change.to > change.from)).toBe(true);

    // Agents whose retries ran out were parked, and every park ended in a resumed call.
    const parked = eventsOf(timeline, 'agent.parked');
    expect(parked.length).toBeGreaterThan(0);
    expect(parked.every((park) => park.kind === 'rate-limit')).toBe(true);
    expect(runs.map((run) => count(run, 'agent.unparked'))).toEqual(runs.map((run) => count(run, 'agent.parked')));
    expect(eventsOf(timeline, 'model.retried').length).toBeGreaterThan(0);

    // No call lost: every request the server saw is a recorded attempt, and every answer a recorded response.
    const generations = server.requests.filter((request) => request.path === '/v1/chat/completions');
    expect(generations).toHaveLength(eventsOf(timeline, 'model.requested').length + eventsOf(timeline, 'model.retried').length);
    expect(generations.filter((request) => request.fault === null)).toHaveLength(eventsOf(timeline, 'model.responded').length);
    expect(guards.guardFor('openai-compatible', `${server.url}/v1`).gate.state()).toMatchObject({ inFlight: 0, waiting: 0 });
  }, 180_000);
});
