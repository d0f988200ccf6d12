import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { BenchRow, BenchSection } from './bench-row.js';
import type { RunStatus } from '../src/observe/status/types.js';
import { runGit } from '../src/workspace/git/git.js';
import { startSimServer, stopSimServer, type SimServerProcess } from '../test/testing/sim-server-process.js';

const execFileAsync = promisify(execFile);
const COLONY = new URL('../bin/colony.js', import.meta.url).pathname;
const EXAMPLE = 'stdlib';
const SIM = 'sim?seed=3';
const WORKERS = 8;
/** Claude Sonnet 4.5's list prices, which `anthropic:claude-sonnet-4-5` has built in, given to the OpenAI-compatible runs too so the two compare. */
const SONNET = { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3, cacheWriteInputPerMTok: 3.75 };

interface Figures {
  readonly status: string;
  readonly landed: number;
  readonly input: number;
  readonly cachedInput: number;
  readonly cacheWrite: number;
  readonly output: number;
  readonly costUsd: number;
}

/** `colony run` of the large example against `server` with `model`; the figures of its summary. */
async function runExample(server: SimServerProcess, model: string, flags: readonly string[]): Promise<Figures> {
  const base = mkdtempSync(join(tmpdir(), 'colony-bench-cache-'));
  try {
    const repo = join(base, 'repo');
    cpSync(new URL(`../examples/${EXAMPLE}/`, import.meta.url), repo, { recursive: true });
    await runGit(repo, ['init', '-q', '-b', 'main']);
    await runGit(repo, ['add', '-A']);
    await runGit(repo, ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-q', '-m', 'start']);
    const prices = join(base, 'prices.json');
    writeFileSync(prices, JSON.stringify({ 'openai-compatible:sim': SONNET }));
    const args = [COLONY, 'run', join(repo, 'GOAL.md'), '--repo', repo, '--model', model, '--base-url', server.baseUrl, '--prices', prices, '--workers', String(WORKERS), '--json', '--quiet', ...flags];
    // A run that does not end done exits 1; its summary is the figure all the same.
    const stdout = await execFileAsync(process.execPath, args, { env: { ...process.env, ANTHROPIC_API_KEY: 'local-bench-key' }, maxBuffer: 64 * 2 ** 20 }).then(
      (done) => done.stdout,
      (error: { stdout?: string }) => error.stdout ?? '',
    );
    const result = JSON.parse(stdout) as { status: string; summary: RunStatus };
    const { tokens } = result.summary;
    return {
      status: result.status,
      landed: result.summary.commits.landed,
      input: tokens.input,
      cachedInput: tokens.cachedInput,
      cacheWrite: tokens.cacheWrite,
      output: tokens.output,
      costUsd: result.summary.costUsd,
    };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

const percent = (part: number, whole: number): number => (whole === 0 ? 0 : (100 * part) / whole);

/** What `figures` would have cost with every input token at the full input price: the same run, nothing read from a cache. */
function uncachedCost(figures: Figures): number {
  return (figures.input * SONNET.inputPerMTok + figures.output * SONNET.outputPerMTok) / 1_000_000;
}

/**
 * What prompt caching saves on the large example, through `colony sim-server`, which bills
 * input the way each provider's cache does (from the requests' bytes): as Anthropic
 * (breakpoints), with caching on and with `--no-prompt-cache`, and as an OpenAI-compatible
 * server that caches repeated prefixes by itself. Each run is also priced as if nothing had
 * been read from a cache, which is what a provider without one would bill for it.
 */
export async function benchPromptCache(): Promise<BenchSection> {
  const server = await startSimServer(SIM);
  try {
    process.stdout.write(`  ${EXAMPLE} as anthropic:claude-sonnet-4-5, caching on…\n`);
    const anthropic = await runExample(server, 'anthropic:claude-sonnet-4-5', []);
    process.stdout.write(`  ${EXAMPLE} as anthropic:claude-sonnet-4-5, --no-prompt-cache…\n`);
    const anthropicOff = await runExample(server, 'anthropic:claude-sonnet-4-5', ['--no-prompt-cache']);
    process.stdout.write(`  ${EXAMPLE} as openai-compatible:sim, a server that caches by itself…\n`);
    const compatible = await runExample(server, 'openai-compatible:sim', []);

    const perModule = (dollars: number, figures: Figures) => dollars / Math.max(1, figures.landed);
    const state = (figures: Figures) => `${figures.status}, ${figures.landed} commits landed`;
    const rows: BenchRow[] = [];
    for (const [label, figures] of [['anthropic', anthropic], ['openai-compatible', compatible]] as const) {
      rows.push({
        name: `${label}: share of input read from the cache`,
        value: percent(figures.cachedInput, figures.input),
        unit: '%',
        target: '≥ 85 %',
        note: `${EXAMPLE}, ${SIM}, --workers ${WORKERS}; ${figures.cachedInput.toLocaleString('en-US')} of ${figures.input.toLocaleString('en-US')} input tokens, ${figures.cacheWrite.toLocaleString('en-US')} written; ${state(figures)}`,
      });
      rows.push({
        name: `${label}: input tokens per landed module`,
        value: figures.input / Math.max(1, figures.landed),
        unit: 'tokens',
        note: `${((figures.input - figures.cachedInput) / Math.max(1, figures.landed)).toFixed(0)} of them not read from the cache`,
      });
      rows.push({
        name: `${label}: cost per landed module`,
        value: perModule(figures.costUsd, figures),
        unit: '$',
        note: 'Claude Sonnet 4.5 list prices: $3 input, $0.30 cached, $3.75 cache write, $15 output per million tokens',
      });
      rows.push({
        name: `${label}: cost per landed module against the same tokens uncached`,
        value: figures.costUsd / uncachedCost(figures),
        unit: '×',
        note: `uncached: $${perModule(uncachedCost(figures), figures).toFixed(4)} a module, every input token at $3 per million`,
      });
    }
    rows.push({
      name: 'anthropic, --no-prompt-cache: cost per landed module',
      value: perModule(anthropicOff.costUsd, anthropicOff),
      unit: '$',
      note: `a run of its own: ${percent(anthropicOff.cachedInput, anthropicOff.input).toFixed(1)} % of ${anthropicOff.input.toLocaleString('en-US')} input tokens read from the cache; ${state(anthropicOff)}`,
    });
    return { rows };
  } finally {
    await stopSimServer(server.process);
  }
}
