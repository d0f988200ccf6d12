import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { BenchRow, BenchSection } from './bench-row.js';
import type { RunStatus } from '../src/observe/status/types.js';
import { runGit } from '../src/workspace/git/git.js';

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

interface Server {
  readonly process: ChildProcess;
  readonly baseUrl: string;
}

/** The real `colony sim-server` on a free port; `flags` such as `--no-prompt-cache`. */
async function startServer(flags: readonly string[]): Promise<Server> {
  const child = spawn(process.execPath, [COLONY, 'sim-server', '--port', '0', '--sim', SIM, ...flags], { stdio: ['ignore', 'pipe', 'inherit'] });
  let printed = '';
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const match = /--base-url (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(printed);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`colony sim-server exited with ${code}: ${printed}`)));
  });
  return { process: child, baseUrl };
}

async function stopServer(server: Server): Promise<void> {
  if (server.process.exitCode !== null) return;
  const exited = once(server.process, 'exit');
  server.process.kill('SIGTERM');
  await exited;
}

/** `colony run` of the large example against `server` with `model`; the figures of its summary. */
async function runExample(server: Server, model: string, flags: readonly string[]): Promise<Figures> {
  const base = mkdtempSync(join(tmpdir(), 'colony-bench-cache-'));
  try {
    const repo = join(base, 'repo');
    cpSync(new URL(`../examples/${EXAMPLE}/`, import.meta.url), repo, { recursive: true });
    await runGit(repo, ['init', '-q', '-b', 'main']);
    await runGit(repo, ['add', '-A']);
    await runGit(repo, ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-q', '-m', 'start']);
    const prices = join(base, 'prices.json');
    writeFileSync(prices, JSON.stringify({ 'openai-compatible:sim': SONNET }));
    const args = [COLONY, 'run', join(repo, 'GOAL.md'), '--repo', repo, '--model', model, '--base-url', server.baseUrl, '--prices', prices, '--workers', String(WORKERS), '--json', ...flags];
    const { stdout } = await execFileAsync(process.execPath, args, {
      env: { ...process.env, ANTHROPIC_API_KEY: 'local-bench-key' },
      maxBuffer: 64 * 2 ** 20,
    });
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

/**
 * What prompt caching saves on the large example, through `colony sim-server`, which bills
 * input the way each provider's cache does (from the requests' bytes): once as Anthropic
 * (breakpoints) with caching on and off, once as an OpenAI-compatible server that caches
 * repeated prefixes by itself, against one that caches nothing.
 */
export async function benchPromptCache(): Promise<BenchSection> {
  const caching = await startServer([]);
  const plain = await startServer(['--no-prompt-cache']);
  try {
    const runs: { label: string; cached: Figures; uncached: Figures; how: string }[] = [];
    process.stdout.write(`  ${EXAMPLE} as anthropic:claude-sonnet-4-5, caching on…\n`);
    const anthropicOn = await runExample(caching, 'anthropic:claude-sonnet-4-5', []);
    process.stdout.write(`  ${EXAMPLE} as anthropic:claude-sonnet-4-5, --no-prompt-cache…\n`);
    const anthropicOff = await runExample(caching, 'anthropic:claude-sonnet-4-5', ['--no-prompt-cache']);
    runs.push({ label: 'anthropic', cached: anthropicOn, uncached: anthropicOff, how: 'colony run against colony run --no-prompt-cache' });
    process.stdout.write(`  ${EXAMPLE} as openai-compatible:sim, a server that caches…\n`);
    const compatibleOn = await runExample(caching, 'openai-compatible:sim', []);
    process.stdout.write(`  ${EXAMPLE} as openai-compatible:sim, a server that caches nothing…\n`);
    const compatibleOff = await runExample(plain, 'openai-compatible:sim', []);
    runs.push({ label: 'openai-compatible', cached: compatibleOn, uncached: compatibleOff, how: 'a server that caches repeated prefixes against colony sim-server --no-prompt-cache' });

    const rows: BenchRow[] = [];
    for (const { label, cached, uncached, how } of runs) {
      const state = (figures: Figures) => `${figures.status}, ${figures.landed} commits landed`;
      rows.push({
        name: `${label}: share of input read from the cache`,
        value: percent(cached.cachedInput, cached.input),
        unit: '%',
        target: '≥ 85 %',
        note: `${EXAMPLE}, ${SIM}, --workers ${WORKERS}; ${cached.cachedInput.toLocaleString('en-US')} of ${cached.input.toLocaleString('en-US')} input tokens, ${cached.cacheWrite.toLocaleString('en-US')} written; ${state(cached)}`,
      });
      rows.push({
        name: `${label}: input tokens per landed module`,
        value: cached.input / Math.max(1, cached.landed),
        unit: 'tokens',
        note: `${((cached.input - cached.cachedInput) / Math.max(1, cached.landed)).toFixed(0)} of them not from the cache; without caching ${(uncached.input / Math.max(1, uncached.landed)).toFixed(0)} (${state(uncached)})`,
      });
      rows.push({ name: `${label}: cost per landed module, cached`, value: cached.costUsd / Math.max(1, cached.landed), unit: '$', note: 'Claude Sonnet 4.5 list prices: $3 input, $0.30 cached, $3.75 cache write, $15 output per million tokens' });
      rows.push({ name: `${label}: cost per landed module, not cached`, value: uncached.costUsd / Math.max(1, uncached.landed), unit: '$', note: how });
      rows.push({
        name: `${label}: cost with caching against without`,
        value: cached.costUsd / Math.max(1, cached.landed) / (uncached.costUsd / Math.max(1, uncached.landed)),
        unit: '×',
        note: 'per landed module, the two runs of the same example in this benchmark',
      });
    }
    return { rows };
  } finally {
    await stopServer(caching);
    await stopServer(plain);
  }
}
