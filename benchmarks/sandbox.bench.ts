import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLocalProcessRunner } from '../src/sandbox/process/process-runner.js';
import type { RunProcess } from '../src/sandbox/process/types.js';
import { DEFAULT_SANDBOX_GID, openSandbox } from '../src/sandbox/sandbox.js';
import type { SandboxMethod } from '../src/sandbox/types.js';
import type { BenchRow, BenchSection, BenchSettings } from './bench-row.js';

const DEFAULT_RUNS = 200;
const WARM_UP_RUNS = 10;

function percentile(sorted: readonly number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? Number.NaN;
}

/**
 * What confinement costs per command: `true` and `echo hi` through the local runner and
 * through each confined method the machine can open, the runners taking turns command by
 * command so each sees the same machine. Wall time from the call to the result, which for a
 * confined command includes making and removing its cgroup and sweeping it.
 */
export async function benchSandbox(settings: BenchSettings = {}): Promise<BenchSection> {
  const runs = settings.runs ?? DEFAULT_RUNS;
  const root = mkdtempSync(join(tmpdir(), 'colony-bench-sandbox-'));
  chmodSync(root, 0o755);
  const workspace = join(root, 'workspace');
  mkdirSync(workspace);
  // The figures are wall times of short processes, so how busy the machine was matters.
  const notes: string[] = [`Load average when the suite started: ${loadavg().map((load) => load.toFixed(1)).join(', ')}.`];
  const runners: { name: string; run: RunProcess; close: () => Promise<void> }[] = [
    { name: 'local', run: createLocalProcessRunner(), close: async () => undefined },
  ];
  try {
    if (process.getuid?.() === 0) {
      chownSync(workspace, 0, DEFAULT_SANDBOX_GID);
      chmodSync(workspace, 0o2770);
    }
    for (const method of ['bubblewrap', 'unshare'] as SandboxMethod[]) {
      const opening = await openSandbox({ method, runId: `bench-sandbox-${method}-${process.pid}` });
      if (!opening.ok) {
        notes.push(`${method} not measured: ${opening.error}`);
        continue;
      }
      const spillDir = join(root, `spill-${method}`);
      runners.push({ name: method, run: opening.sandbox.runnerFor({ agentId: 'bench', workspace, hidden: [], spillDir, shareNetwork: false }), close: () => opening.sandbox.close() });
    }
    const rows: BenchRow[] = [];
    const medians = new Map<string, number>();
    for (const command of ['true', 'echo hi']) {
      const times = new Map<string, number[]>(runners.map((runner) => [runner.name, []]));
      for (let index = 0; index < WARM_UP_RUNS + runs; index += 1) {
        for (const runner of runners) {
          const started = performance.now();
          const result = await runner.run({ command, cwd: workspace, timeoutMs: 10_000 });
          const elapsed = performance.now() - started;
          if (result.exitCode !== 0) throw new Error(`${runner.name} failed on ${command}: ${result.startError ?? result.output}`);
          if (index >= WARM_UP_RUNS) times.get(runner.name)?.push(elapsed);
        }
      }
      for (const runner of runners) {
        const sorted = [...(times.get(runner.name) ?? [])].sort((a, b) => a - b);
        medians.set(`${runner.name} ${command}`, percentile(sorted, 0.5));
        rows.push({ name: `${runner.name}: \`${command}\`, median`, value: percentile(sorted, 0.5), unit: 'ms', note: `${runs} runs` });
        rows.push({ name: `${runner.name}: \`${command}\`, p95`, value: percentile(sorted, 0.95), unit: 'ms', ...(runner.name === 'local' ? {} : { target: '< 30 ms' }) });
      }
    }
    for (const runner of runners.slice(1)) {
      rows.push({
        name: `${runner.name}: cost over the local runner, \`echo hi\` median`,
        value: (medians.get(`${runner.name} echo hi`) ?? 0) - (medians.get('local echo hi') ?? 0),
        unit: 'ms',
        target: '< 30 ms',
        note: 'cgroup made and removed, launcher, prlimit, setpriv, the confinement, the sweep',
      });
    }
    return { rows, details: notes.join('\n\n') };
  } finally {
    for (const runner of runners) await runner.close();
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { rows, details } = await benchSandbox({ runs: 20 });
  for (const row of rows) console.log(row);
  console.log(details);
}
