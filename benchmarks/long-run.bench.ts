import { execFileSync } from 'node:child_process';
import type { BenchSection } from './bench-row.js';
import { startSimServer, stopSimServer } from '../test/testing/sim-server-process.js';

interface LongRunFigures {
  readonly status: string;
  readonly checkPassed: boolean | null;
  readonly wallMs: number;
  readonly modelCalls: number;
  readonly agents: number;
  readonly mostSteps: number;
  readonly mostStepsRole: string;
  readonly largestRequest: number;
  readonly largestBySlice: readonly number[];
  readonly compactions: number;
  readonly compactionFailures: number;
  readonly compactionTokens: number;
  readonly allTokens: number;
  readonly largestSummaryTokens: number;
  readonly rootFailure: string | null;
  readonly inputTokens: number;
  readonly cachedInputTokens: number;
  readonly mostNoticeCopies: number;
  readonly requestsWithNotice: number;
}

const CHILD = new URL('./long-run-child.ts', import.meta.url).pathname;
const MODULES = 650;
const WORKERS = 16;
const WINDOW = 128_000;
/** The sim refuses requests over its window, as a real provider does. */
const MODEL = `sim?seed=21&context=${WINDOW}`;

/** A run that could not start (the child's status is its error) is no measurement: it stops the benchmark. */
function runChild(compaction: boolean, provider: { readonly model: string; readonly baseUrl: string } | null = null): LongRunFigures {
  const settings = { modules: MODULES, workers: WORKERS, model: provider?.model ?? MODEL, windowTokens: WINDOW, compaction, ...(provider === null ? {} : { baseUrl: provider.baseUrl }) };
  const output = execFileSync(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(settings)], {
    encoding: 'utf8',
    maxBuffer: 16 * 2 ** 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const figures = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as LongRunFigures;
  if (figures.modelCalls === 0) throw new Error(`the long run made no model call: ${figures.status}`);
  return figures;
}

/**
 * A long run kept alive by compaction: 650 modules in one folder, so the root planner publishes
 * every task and hears back from each, with every model's window set to 128,000 tokens and the
 * sim refusing anything larger. The same run with compaction off shows what it prevents.
 */
export async function benchLongRun(): Promise<BenchSection> {
  process.stdout.write(`  ${MODULES} modules, window ${WINDOW} tokens, compaction on…\n`);
  const on = runChild(true);
  process.stdout.write(`  the same, compaction off…\n`);
  const off = runChild(false);
  const share = on.allTokens === 0 ? 0 : (100 * on.compactionTokens) / on.allTokens;
  const setting = `the sim's long scenario of ${MODULES} modules in one folder, --workers ${WORKERS}, ${MODEL}, --context-window ${WINDOW}`;
  const rows = [
    { name: 'long run, compaction on: model calls', value: on.modelCalls, unit: 'calls', target: '≥ 5,000', note: `${setting}; ${on.agents} agents; status ${on.status}, check ${on.checkPassed === true ? 'passed' : 'FAILED'}; ${Math.round(on.wallMs / 1000)} s` },
    { name: 'long run, compaction on: most steps of one agent', value: on.mostSteps, unit: 'steps', target: '≥ 500', note: `the ${on.mostStepsRole}` },
    { name: 'long run, compaction on: largest request', value: on.largestRequest, unit: 'tokens', target: `≤ ${WINDOW.toLocaleString('en-US')}`, note: `as the provider counted it; the largest summary left ${on.largestSummaryTokens} tokens` },
    { name: 'long run, compaction on: compactions', value: on.compactions, unit: 'summaries', note: `${on.compactionFailures} failed` },
    { name: 'long run: tokens spent on compaction, share of all', value: Number(share.toFixed(2)), unit: '%', target: '< 10%', note: `${on.compactionTokens} of ${on.allTokens} tokens` },
    { name: 'long run, compaction off: model calls before it ended', value: off.modelCalls, unit: 'calls', target: 'fails: the root planner outgrows its window', note: `status ${off.status}; root planner: ${off.rootFailure ?? 'did not fail'}` },
  ];
  const slices = (figures: LongRunFigures) => figures.largestBySlice.map((tokens) => tokens.toLocaleString('en-US')).join(' | ');
  const details = [
    'Largest request in each tenth of the run\'s wall time (tokens, as the provider counted them):',
    '',
    `| run | ${on.largestBySlice.map((_, index) => `${index * 10}–${(index + 1) * 10}%`).join(' | ')} |`,
    `|---|${on.largestBySlice.map(() => '---').join('|')}|`,
    `| compaction on | ${slices(on)} |`,
    `| compaction off | ${slices(off)} |`,
  ].join('\n');
  return { rows, details };
}

/**
 * The same long run, compaction on, with the planners and workers reaching the sim as Anthropic
 * over HTTP (`colony sim-server`, which bills input the way Anthropic's cache does, from the
 * requests' bytes): what share of the input the cache serves when the root planner hears back
 * from 650 tasks, and that every request holds each of colony's standing notices once at most.
 */
export async function benchLongCache(): Promise<BenchSection> {
  const server = await startSimServer(MODEL);
  try {
    process.stdout.write(`  ${MODULES} modules as anthropic:claude-sonnet-4-5 through colony sim-server…\n`);
    const figures = runChild(true, { model: 'anthropic:claude-sonnet-4-5', baseUrl: server.baseUrl });
    const share = figures.inputTokens === 0 ? 0 : (100 * figures.cachedInputTokens) / figures.inputTokens;
    const setting = `the sim's long scenario of ${MODULES} modules in one folder, --workers ${WORKERS}, anthropic:claude-sonnet-4-5 against colony sim-server --sim ${MODEL}, --context-window ${WINDOW}`;
    const rows = [
      { name: 'long run through the server: share of input read from the cache', value: Number(share.toFixed(1)), unit: '%', target: '≥ 85 %', note: `${setting}; ${figures.cachedInputTokens.toLocaleString('en-US')} of ${figures.inputTokens.toLocaleString('en-US')} input tokens; ${figures.modelCalls} model calls, ${figures.compactions} compactions; status ${figures.status}, check ${figures.checkPassed === true ? 'passed' : 'FAILED'}; ${Math.round(figures.wallMs / 1000)} s` },
      { name: 'long run through the server: copies of one notice in a request, at most', value: figures.mostNoticeCopies, unit: 'copies', target: '1', note: `files in flight, budget, steps and main-failing notices; ${figures.requestsWithNotice.toLocaleString('en-US')} of ${figures.modelCalls.toLocaleString('en-US')} requests held one` },
    ];
    return { rows };
  } finally {
    await stopSimServer(server.process);
  }
}

