import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordedEvent } from '../src/events/event-types.js';
import { resolveModel } from '../src/model/registry.js';
import { SIM_MODEL_FACTORY } from '../src/sim/sim-model-factory.js';
import { runRunSession } from '../src/orchestrator/session/run-session.js';
import { runGit } from '../src/workspace/git/git.js';
import { writeGeneratedRepository } from './generated-goal.js';

/**
 * One run of a generated goal measured for the CPU its agents' commands use:
 * `tsx benchmarks/command-cpu-child.ts '<json settings>'` prints one JSON line of figures.
 * Commands run in the sandbox, whose cgroups count each one's CPU (recorded with the call's
 * `tool.ended`, an acceptance check's result and a green snapshot).
 */
interface Settings {
  readonly modules: number;
  readonly workers: number;
  readonly model: string;
}

export interface CommandCpuFigures {
  readonly status: string;
  readonly wallMs: number;
  /** Modules whose file is on main at the end. */
  readonly landedModules: number;
  /** CPU of the commands agents ran themselves (run_command), in seconds, and how many. */
  readonly agentCommandCpuS: number;
  readonly agentCommands: number;
  /** Commands among them whose CPU no cgroup counted. */
  readonly uncounted: number;
  /** CPU of the acceptance checks colony ran for tasks, in seconds, and how many. */
  readonly acceptanceCpuS: number;
  readonly acceptanceChecks: number;
  /** CPU of the green loop's snapshots of main, in seconds, and how many. */
  readonly greenCpuS: number;
  readonly greenChecks: number;
}

const settings = JSON.parse(process.argv[2] ?? '{}') as Settings;
const base = mkdtempSync(join(tmpdir(), 'colony-bench-cpu-'));
// Agents' commands run as other users: they must be let through to the repository.
chmodSync(base, 0o711);
const repoDir = join(base, 'repo');
await writeGeneratedRepository(repoDir, settings.modules);

const resolved = resolveModel(settings.model, { env: {} }, { sim: SIM_MODEL_FACTORY });
if (!resolved.ok) throw new Error(resolved.error);

const figures = { agentCommandMs: 0, agentCommands: 0, uncounted: 0, acceptanceMs: 0, acceptanceChecks: 0, greenMs: 0, greenChecks: 0 };
const observe = (event: RecordedEvent): void => {
  if (event.type === 'tool.ended' && event.data.name === 'run_command') {
    figures.agentCommands += 1;
    if (event.data.cpuMs === undefined) figures.uncounted += 1;
    figures.agentCommandMs += event.data.cpuMs ?? 0;
  } else if (event.type === 'acceptance.checked') {
    for (const result of event.data.results) {
      figures.acceptanceChecks += 1;
      figures.acceptanceMs += result.cpuMs ?? 0;
    }
  } else if (event.type === 'green.checked') {
    figures.greenChecks += 1;
    figures.greenMs += event.data.cpuMs ?? 0;
  }
};

const started = performance.now();
const result = await runRunSession({
  repoDir,
  workerModel: resolved.model,
  plannerModel: resolved.model,
  settings: { goalPath: join(repoDir, 'GOAL.md'), workers: settings.workers, workerMaxSteps: 100, plannerMaxSteps: 2_000 },
  onEvent: observe,
});
const wallMs = performance.now() - started;
const trunk = result.ok ? result.mainCommit : 'main';
const files = (await runGit(repoDir, ['ls-tree', '-r', '--name-only', trunk])).stdout.split('\n');
const output: CommandCpuFigures = {
  status: result.ok ? result.status : result.error,
  wallMs,
  landedModules: files.filter((file) => /^src\/part\d+\/add\d+\.js$/.test(file)).length,
  agentCommandCpuS: figures.agentCommandMs / 1000,
  agentCommands: figures.agentCommands,
  uncounted: figures.uncounted,
  acceptanceCpuS: figures.acceptanceMs / 1000,
  acceptanceChecks: figures.acceptanceChecks,
  greenCpuS: figures.greenMs / 1000,
  greenChecks: figures.greenChecks,
};
process.stdout.write(`${JSON.stringify(output)}\n`);
rmSync(base, { recursive: true, force: true });
