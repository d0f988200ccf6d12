import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordedEvent } from '../src/events/event-types.js';
import type { ChatModel } from '../src/model/chat-model.js';
import { defaultPromptSet } from '../src/orchestrator/prompts/prompt-set.js';
import { resolveModel } from '../src/model/registry.js';
import { SIM_MODEL_FACTORY } from '../src/sim/sim-model-factory.js';
import { runRunSession } from '../src/orchestrator/session/run-session.js';
import { writeLongScenario } from '../src/sim/scenario/long-scenario.js';

/**
 * One long run measured for how its agents' contexts grow: `tsx benchmarks/long-run-child.ts '<json>'`
 * builds the sim's long scenario, whose modules all sit in one folder (so the root planner
 * publishes and hears back from every task itself), and prints one JSON line of figures.
 */
interface Settings {
  readonly modules: number;
  readonly workers: number;
  readonly model: string;
  readonly windowTokens: number;
  readonly compaction: boolean;
  /** A provider's address (`colony sim-server`) the model is reached at, over HTTP; in process when absent. */
  readonly baseUrl?: string;
}

/**
 * The openings of the notices colony keeps standing before an agent (files in flight, a budget
 * warning, steps used, checks failing on main), up to the first colon of colony's own prompt for
 * each: each must be in a request once at most, however often it changed.
 */
const NOTICE_OPENINGS = (['files-in-flight', 'budget-warning', 'steps-warning', 'main-failing'] as const).map((name) => {
  const text = defaultPromptSet().text(name);
  return text.slice(0, text.indexOf(':') + 1);
});

/** How many slices of the run's wall time the largest request is reported for. */
const SLICES = 10;

const settings = JSON.parse(process.argv[2] ?? '{}') as Settings;
const base = mkdtempSync(join(tmpdir(), 'colony-bench-long-'));
// Agents' commands run as other users: they must be let through to the repository.
chmodSync(base, 0o711);
const repoDir = join(base, 'repo');
const { goalPath } = await writeLongScenario(repoDir, settings.modules);

const resolved = resolveModel(settings.model, { env: { ANTHROPIC_API_KEY: 'local-bench-key' }, baseUrl: settings.baseUrl }, { sim: SIM_MODEL_FACTORY });
if (!resolved.ok) throw new Error(resolved.error);

// What each request carries, read as a provider receives it: the most copies of one notice, and how many requests held one.
let mostNoticeCopies = 0;
let requestsWithNotice = 0;
const model: ChatModel = {
  spec: resolved.model.spec,
  call: (request, options) => {
    const text = request.messages.filter((message) => message.role === 'user').map((message) => JSON.stringify(message)).join('\n');
    const copies = NOTICE_OPENINGS.map((opening) => text.split(opening).length - 1);
    mostNoticeCopies = Math.max(mostNoticeCopies, ...copies);
    if (copies.some((count) => count > 0)) requestsWithNotice += 1;
    return resolved.model.call(request, options);
  },
};

const requests: { at: number; tokens: number; agentId: string }[] = [];
const steps = new Map<string, number>();
const roles = new Map<string, string>();
let modelCalls = 0;
let allTokens = 0;
let inputTokens = 0;
let cachedInputTokens = 0;
let compactions = 0;
let compactionTokens = 0;
let compactionFailures = 0;
let largestSummaryTokens = 0;
let failure: string | null = null;
const started = Date.now();
const observe = (event: RecordedEvent): void => {
  switch (event.type) {
    case 'agent.started':
      roles.set(event.agentId, event.data.role);
      return;
    case 'model.responded':
      modelCalls += 1;
      allTokens += event.data.usage.inputTokens + event.data.usage.outputTokens;
      inputTokens += event.data.usage.inputTokens;
      cachedInputTokens += event.data.usage.cachedInputTokens;
      steps.set(event.agentId, Math.max(steps.get(event.agentId) ?? 0, event.data.step));
      // What the provider counted is what it saw: the request's real size.
      requests.push({ at: event.ts - started, tokens: event.data.usage.inputTokens, agentId: event.agentId });
      return;
    case 'context.compacted':
      compactions += 1;
      compactionTokens += event.data.usage.inputTokens + event.data.usage.outputTokens;
      allTokens += event.data.usage.inputTokens + event.data.usage.outputTokens;
      largestSummaryTokens = Math.max(largestSummaryTokens, event.data.afterTokens);
      return;
    case 'context.compaction-failed':
      compactionFailures += 1;
      return;
    case 'agent.failed':
      if (roles.get(event.agentId) === 'root-planner') failure ??= event.data.reason;
      return;
    default:
      return;
  }
};

const result = await runRunSession({
  repoDir,
  workerModel: model,
  plannerModel: model,
  settings: {
    goalPath,
    workers: settings.workers,
    workerMaxSteps: 100,
    plannerMaxSteps: 5_000,
    freshness: { contextWindows: { all: settings.windowTokens, byModel: {} }, compaction: settings.compaction },
  },
  onEvent: observe,
});
const wallMs = Date.now() - started;
const slice = wallMs / SLICES;
const largestBySlice = Array.from({ length: SLICES }, (_, index) =>
  Math.max(0, ...requests.filter((request) => request.at >= index * slice && request.at < (index + 1) * slice).map((request) => request.tokens)),
);
const [busiestAgent, mostSteps] = [...steps].reduce((best, entry) => (entry[1] > best[1] ? entry : best), ['', 0] as [string, number]);
process.stdout.write(
  `${JSON.stringify({
    status: result.ok ? result.status : result.error,
    checkPassed: result.ok ? (result.check?.passed ?? null) : null,
    wallMs,
    modelCalls,
    agents: roles.size,
    mostSteps,
    mostStepsRole: roles.get(busiestAgent) ?? '',
    largestRequest: Math.max(0, ...requests.map((request) => request.tokens)),
    largestBySlice,
    compactions,
    compactionFailures,
    compactionTokens,
    allTokens,
    largestSummaryTokens,
    rootFailure: failure,
    inputTokens,
    cachedInputTokens,
    mostNoticeCopies,
    requestsWithNotice,
  })}\n`,
);
rmSync(base, { recursive: true, force: true });
