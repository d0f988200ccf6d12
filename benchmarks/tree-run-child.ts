import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveModel } from '../src/model/registry.js';
import { SIM_MODEL_FACTORY } from '../src/sim/sim-model-factory.js';
import { runRunSession } from '../src/orchestrator/session/run-session.js';
import { runGit } from '../src/workspace/git/git.js';
import { writeGeneratedRepository } from './generated-goal.js';

/**
 * One `colony run` measured in a process of its own, so its peak memory is its own:
 * `tsx benchmarks/tree-run-child.ts '<json settings>'` prints one JSON line of figures.
 */
interface Settings {
  /** An example folder under examples/, or a generated goal with this many modules. */
  readonly example?: string;
  readonly generatedModules?: number;
  readonly workers: number;
  readonly model: string;
}

const settings = JSON.parse(process.argv[2] ?? '{}') as Settings;
const base = mkdtempSync(join(tmpdir(), 'colony-bench-tree-'));
const repoDir = join(base, 'repo');
if (settings.example !== undefined) {
  cpSync(new URL(`../examples/${settings.example}/`, import.meta.url), repoDir, { recursive: true });
  await runGit(repoDir, ['init', '-q', '-b', 'main']);
  await runGit(repoDir, ['add', '-A']);
  await runGit(repoDir, ['commit', '-q', '-m', 'start']);
} else {
  await writeGeneratedRepository(repoDir, settings.generatedModules ?? 500);
}

const resolved = resolveModel(settings.model, { env: {} }, { sim: SIM_MODEL_FACTORY });
if (!resolved.ok) throw new Error(resolved.error);

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 200);
let agents = 0;
let workers = 0;
let peakAgents = 0;
let peakWorkers = 0;
let landed = 0;
let conflicts = 0;
const roles = new Map<string, string>();
const handoffCommits: string[] = [];
const started = performance.now();
const result = await runRunSession({
  repoDir,
  workerModel: resolved.model,
  plannerModel: resolved.model,
  settings: {
    goalPath: join(repoDir, 'GOAL.md'),
    workers: settings.workers,
    workerMaxSteps: 100,
    plannerMaxSteps: 2000,
  },
  onEvent: (event) => {
    if (event.type === 'agent.started') {
      roles.set(event.agentId, event.data.role);
      agents += 1;
      if (event.data.role === 'worker') workers += 1;
      peakAgents = Math.max(peakAgents, agents);
      peakWorkers = Math.max(peakWorkers, workers);
    } else if (event.type === 'agent.ended') {
      agents -= 1;
      if (roles.get(event.agentId) === 'worker') workers -= 1;
    } else if (event.type === 'merge.landed') {
      landed += 1;
    } else if (event.type === 'merge.conflicted') {
      conflicts += 1;
    } else if (event.type === 'handoff.submitted') {
      handoffCommits.push(...event.data.handoff.commits);
    }
  },
});
const wallMs = performance.now() - started;
const harness = process.cpuUsage();
// Linux counts the CPU of child processes (git, the project's tests) once they are reaped.
const stat = readFileSync('/proc/self/stat', 'utf8');
const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
const ticksPerSecond = 100;
const childrenCpuS = (Number(fields[13]) + Number(fields[14])) / ticksPerSecond;
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
const tasks = roles.size;
// No lost work: every commit a handoff reports as landed is on main.
const onMain = new Set((await runGit(repoDir, ['rev-list', 'main'])).stdout.trim().split('\n'));
const lostCommits = handoffCommits.filter((commit) => !onMain.has(commit));
process.stdout.write(
  `${JSON.stringify({
    ok: result.ok,
    status: result.ok ? result.status : result.error,
    checkPassed: result.ok ? (result.check?.passed ?? null) : null,
    wallMs,
    landed,
    conflicts,
    agents: tasks,
    peakAgents,
    peakWorkers,
    peakRssMb: peakRss / 2 ** 20,
    harnessCpuS: (harness.user + harness.system) / 1e6,
    childrenCpuS,
    handoffCommits: handoffCommits.length,
    lostCommits: lostCommits.length,
  })}\n`,
);
rmSync(base, { recursive: true, force: true });
