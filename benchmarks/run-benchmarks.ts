import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import type { BenchRow, BenchSection, BenchSettings } from './bench-row.js';
import { benchCommandCpu } from './command-cpu.bench.js';
import { benchDependencyLayers } from './dependency-layer.bench.js';
import { benchDurability, benchKilledRun } from './durability.bench.js';
import { benchEventAppend } from './event-append.bench.js';
import { benchGreen } from './green.bench.js';
import { benchLargeGoal, benchLargeGoalStop } from './large-goal.bench.js';
import { benchLongCache, benchLongRun } from './long-run.bench.js';
import { benchMerge } from './merge.bench.js';
import { benchPostgresStore } from './postgres-store.bench.js';
import { benchOriginMerges } from './origin-merge.bench.js';
import { benchPromptCache } from './prompt-cache.bench.js';
import { benchSandbox } from './sandbox.bench.js';
import { benchStartup } from './startup.bench.js';
import { benchToolCallOverhead } from './tool-call-overhead.bench.js';
import { benchManyAgents, benchTreeAt64, benchTreeRun, benchTreeWithFaults } from './tree-run.bench.js';
import { benchTui } from './tui.bench.js';
import { benchWorkInFlight } from './work-in-flight.bench.js';
import { benchWorkspaces } from './workspaces.bench.js';

/**
 * `npm run bench`: runs every benchmark, prints the rows, and records them with the machine and
 * the date in docs/benchmarks.md (newest run first, older runs kept below).
 */
const allSuites: { name: string; title: string; run: (settings: BenchSettings) => Promise<BenchRow[] | BenchSection> }[] = [
  { name: 'startup', title: 'Starting colony: --help and status against bare node', run: benchStartup },
  { name: 'tool-call', title: 'Harness overhead per tool call', run: benchToolCallOverhead },
  { name: 'event-log', title: 'Event log appends', run: () => benchEventAppend() },
  { name: 'tree', title: 'The tree: the large example at 1 to 64 workers', run: benchTreeRun },
  { name: 'tree-64', title: 'The tree at 64 workers: the large example, no lost work', run: benchTreeAt64 },
  { name: 'tree-faults', title: 'The tree with faults: the large example with bugs, malformed calls and crashes', run: benchTreeWithFaults },
  { name: 'many-agents', title: 'Memory with 500 agents at once', run: benchManyAgents },
  { name: 'files-in-flight', title: 'Files in flight: what planners’ conflict avoidance costs', run: benchWorkInFlight },
  { name: 'deps', title: 'Shared dependency installs: disk and time per workspace', run: benchDependencyLayers },
  { name: 'merge', title: 'Landing on main: self-merge against one integrator', run: benchMerge },
  { name: 'workspaces', title: 'Workspaces side by side: time and disk per workspace', run: benchWorkspaces },
  { name: 'sandbox', title: 'The sandbox: what confinement costs per command', run: benchSandbox },
  { name: 'durability', title: 'Durability: what recording before acting costs', run: benchDurability },
  { name: 'postgres', title: 'PostgreSQL against SQLite on one machine: appends, claims and a whole run', run: benchPostgresStore },
  { name: 'origin-merge', title: 'Landing on an origin over smart HTTP from three hosts, against one repository', run: benchOriginMerges },
  { name: 'killed-run', title: 'A run killed twenty times and resumed', run: () => benchKilledRun() },
  { name: 'green', title: 'The green branch: main red and back to green', run: () => benchGreen() },
  { name: 'long-run', title: 'A long run kept inside its context window by compaction', run: () => benchLongRun() },
  { name: 'large-goal', title: 'A goal three times the planner’s context window, with 500 workers', run: () => benchLargeGoal() },
  { name: 'large-goal-stop', title: 'A goal three times the planner’s context window, stopped with SIGTERM while its workers run', run: () => benchLargeGoalStop() },
  { name: 'tui', title: 'The terminal UI on a large log', run: () => benchTui() },
  { name: 'long-cache', title: 'A long run through a provider: input read from the cache, and notices held once', run: () => benchLongCache() },
  { name: 'prompt-cache', title: 'Prompt caching: input read from the cache, and cost per landed module', run: () => benchPromptCache() },
  { name: 'test-cost', title: "Test cost per landed module as the project grows: CPU in agents' commands", run: () => benchCommandCpu() },
];

function usage(problem: string): never {
  process.stderr.write(`${problem}\n`);
  process.exit(2);
}

/** Splits the arguments into suite names and the settings some suites take (`--seconds 20`, `--mergers 1,4,16`, `--runs 50`). */
function parseArguments(args: readonly string[]): { names: string[]; settings: BenchSettings } {
  const names: string[] = [];
  let seconds: number | undefined;
  let mergers: number[] | undefined;
  let runs: number | undefined;
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    const value = args[index + 1] ?? '';
    if (arg === '--seconds') {
      seconds = Number(value);
      if (!(seconds > 0)) usage(`--seconds needs a number of seconds above 0, got "${value}"`);
      index += 1;
    } else if (arg === '--mergers') {
      mergers = value.split(',').map(Number);
      if (mergers.some((count) => !Number.isInteger(count) || count < 1)) usage(`--mergers needs whole numbers of at least 1, like 1,4,16; got "${value}"`);
      index += 1;
    } else if (arg === '--runs') {
      runs = Number(value);
      if (!Number.isInteger(runs) || runs < 1) usage(`--runs needs a whole number of at least 1, got "${value}"`);
      index += 1;
    } else {
      names.push(arg);
    }
  }
  return {
    names,
    settings: { ...(seconds === undefined ? {} : { seconds }), ...(mergers === undefined ? {} : { mergers }), ...(runs === undefined ? {} : { runs }) },
  };
}

// `npm run bench -- tree many-agents` runs only those; no names runs them all.
const { names: wanted, settings } = parseArguments(process.argv.slice(2));
const unknown = wanted.filter((name) => !allSuites.some((suite) => suite.name === name));
if (unknown.length > 0) usage(`unknown benchmark ${unknown.join(', ')}: choose from ${allSuites.map((suite) => suite.name).join(', ')}`);
const suites = wanted.length === 0 ? allSuites : allSuites.filter((suite) => wanted.includes(suite.name));

const RESULTS_FILE = new URL('../docs/benchmarks.md', import.meta.url);
const HEADER = '# Benchmarks\n\nWritten by `npm run bench`; the newest run comes first.\n';

function machine(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const git = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  const memory = `${Math.round(totalmem() / 2 ** 30)} GiB`;
  return `${cpus().length} × ${cpu}, ${memory}, Node ${process.version}, ${git}, ${process.platform} ${process.arch}`;
}

function formatValue(value: number): string {
  // Counts read as counts: 22 summaries, not 22.0.
  if (value >= 100 || Number.isInteger(value)) return Math.round(value).toLocaleString('en-US');
  return value.toPrecision(3);
}

const sections: string[] = [];
for (const suite of suites) {
  process.stdout.write(`${suite.title}…\n`);
  const result = await suite.run(settings);
  const { rows, details } = Array.isArray(result) ? { rows: result, details: undefined } : result;
  const lines = [`### ${suite.title}`];
  if (rows.length > 0) lines.push('', '| measure | value | target | how |', '|---|---|---|---|');
  for (const row of rows) {
    process.stdout.write(`  ${row.name}: ${formatValue(row.value)} ${row.unit}${row.target ? ` (target ${row.target})` : ''}\n`);
    lines.push(`| ${row.name} | ${formatValue(row.value)} ${row.unit} | ${row.target ?? ''} | ${row.note ?? ''} |`);
  }
  if (details !== undefined) lines.push('', details);
  sections.push(lines.join('\n'));
}

const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
const run = [`## ${date} UTC`, `Machine: ${machine()}`, ...sections].join('\n\n');
function previousRuns(): string {
  try {
    return readFileSync(RESULTS_FILE, 'utf8').replace(HEADER, '').trim();
  } catch {
    return '';
  }
}
const previous = previousRuns();
writeFileSync(RESULTS_FILE, `${HEADER}\n${run}\n${previous === '' ? '' : `\n${previous}\n`}`);
process.stdout.write(`written to docs/benchmarks.md\n`);
