import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, type BenchRow, type BenchSection, type BenchSettings } from './bench-row.js';

const DEFAULT_RUNS = 20;
const WARM_UP_RUNS = 3;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const COMPILED_BIN = join(ROOT, 'dist', 'cli', 'bin.js');

/**
 * Reports the process's own CPU time and peak memory as it exits. A CommonJS preload, so it
 * costs bare node almost nothing: an ES module preload would start the module loader that
 * `node -e 0` never starts, and flatter every ratio.
 */
const REPORTER = `
const { writeFileSync } = require('node:fs');
process.on('exit', () => {
  const cpu = process.cpuUsage();
  writeFileSync(process.env.COLONY_BENCH_REPORT, JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, rssKb: process.resourceUsage().maxRSS }));
});
`;

interface Sample {
  readonly cpuMs: number;
  readonly rssKb: number;
}

interface Subject {
  readonly name: string;
  readonly args: readonly string[];
}

/**
 * What starting colony costs, as an installed user runs it: the compiled JavaScript (built
 * here as `npm pack` builds it), `colony --help` and `colony status` of a finished run, each
 * against a bare `node -e 0` in the same run, the three taking turns so each sees the same
 * machine. CPU is user plus system time of the process; memory is its peak resident set.
 */
export async function benchStartup(settings: BenchSettings = {}): Promise<BenchSection> {
  const runs = settings.runs ?? DEFAULT_RUNS;
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.js')], { stdio: 'ignore' });
  const root = mkdtempSync(join(tmpdir(), 'colony-bench-startup-'));
  // The demo's sandboxed agents run as other users, who must get through to its repository.
  chmodSync(root, 0o755);
  try {
    const reporter = join(root, 'report.cjs');
    writeFileSync(reporter, REPORTER);
    const demoDir = join(root, 'demo');
    execFileSync(process.execPath, [COMPILED_BIN, 'demo', '--dir', demoDir, '--quiet'], { stdio: 'ignore', env: { ...process.env, NO_COLOR: '1' } });
    const subjects: Subject[] = [
      { name: 'node -e 0', args: ['-e', '0'] },
      { name: 'colony --help', args: [COMPILED_BIN, '--help'] },
      { name: 'colony status', args: [COMPILED_BIN, 'status', '--repo', join(demoDir, 'toolbox')] },
    ];
    const samples = new Map<string, Sample[]>(subjects.map((subject) => [subject.name, []]));
    const reportFile = join(root, 'report.json');
    const load = loadavg().map((figure) => figure.toFixed(1)).join(', ');
    for (let index = 0; index < WARM_UP_RUNS + runs; index += 1) {
      for (const subject of subjects) {
        const child = spawnSync(process.execPath, ['-r', reporter, ...subject.args], { env: { ...process.env, COLONY_BENCH_REPORT: reportFile }, encoding: 'utf8' });
        if (child.status !== 0) throw new Error(`${subject.name} exited ${child.status}: ${child.stderr}`);
        if (index >= WARM_UP_RUNS) samples.get(subject.name)?.push(JSON.parse(readFileSync(reportFile, 'utf8')) as Sample);
      }
    }
    const figures = subjects.map((subject) => {
      const taken = samples.get(subject.name) ?? [];
      return { name: subject.name, cpuMs: median(taken.map((sample) => sample.cpuMs)), rssMb: median(taken.map((sample) => sample.rssKb)) / 1024 };
    });
    const bare = figures[0];
    if (bare === undefined) throw new Error('node -e 0 was not measured');
    const rows: BenchRow[] = [];
    const how = `median of ${runs} runs each, taking turns with node -e 0; the compiled package (dist/), as installed`;
    for (const figure of figures) {
      rows.push({ name: `${figure.name}: CPU`, value: figure.cpuMs, unit: 'ms', note: how });
      rows.push({ name: `${figure.name}: peak memory`, value: figure.rssMb, unit: 'MB', ...(figure === bare ? {} : { target: '< 80 MB' }), note: 'peak resident set of the process' });
      if (figure === bare) continue;
      rows.push({ name: `${figure.name}: CPU against node -e 0`, value: figure.cpuMs / bare.cpuMs, unit: '×', target: '≤ 3×', note: 'the two medians of the same run' });
    }
    return { rows, details: `\`colony status\` reads the finished run of \`colony demo\`. Load average when the suite started: ${load}.` };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
