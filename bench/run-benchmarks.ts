import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import type { BenchRow } from './bench-row.js';
import { benchEventAppend } from './event-append.bench.js';
import { benchToolCallOverhead } from './tool-call-overhead.bench.js';
import { benchManyAgents, benchTreeRun, benchTreeWithFaults } from './tree-run.bench.js';
import { benchWorkspaces } from './workspaces.bench.js';

/**
 * `npm run bench`: runs every benchmark, prints the rows, and records them with the machine and
 * the date in docs/benchmarks.md (newest run first, older runs kept below).
 */
const allSuites: { name: string; title: string; run: () => Promise<BenchRow[]> }[] = [
  { name: 'tool-call', title: 'Harness overhead per tool call', run: benchToolCallOverhead },
  { name: 'event-log', title: 'Event log appends', run: benchEventAppend },
  { name: 'tree', title: 'The tree: the large example at 1 to 64 workers', run: benchTreeRun },
  { name: 'tree-faults', title: 'The tree with faults: the large example with bugs, malformed calls and crashes', run: benchTreeWithFaults },
  { name: 'many-agents', title: 'Memory with 500 agents at once', run: benchManyAgents },
  { name: 'workspaces', title: 'Workspaces side by side: time and disk per workspace', run: benchWorkspaces },
];

// `npm run bench -- tree many-agents` runs only those; no names runs them all.
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !allSuites.some((suite) => suite.name === name));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark ${unknown.join(', ')}: choose from ${allSuites.map((suite) => suite.name).join(', ')}\n`);
  process.exit(2);
}
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
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toPrecision(3);
}

const sections: string[] = [];
for (const suite of suites) {
  process.stdout.write(`${suite.title}…\n`);
  const rows = await suite.run();
  const lines = [`### ${suite.title}`, '', '| measure | value | target | how |', '|---|---|---|---|'];
  for (const row of rows) {
    process.stdout.write(`  ${row.name}: ${formatValue(row.value)} ${row.unit}${row.target ? ` (target ${row.target})` : ''}\n`);
    lines.push(`| ${row.name} | ${formatValue(row.value)} ${row.unit} | ${row.target ?? ''} | ${row.note ?? ''} |`);
  }
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
