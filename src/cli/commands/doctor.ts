import { execFile } from 'node:child_process';
import { statfs } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { defaultStateDir } from '../../orchestrator/setup/state-directory.js';
import type { SandboxMethod } from '../../sandbox/types.js';
import { openRepository } from '../../workspace/git/repository.js';
import { probeOverlaySupport } from '../../workspace/providers/overlay/overlay-probe.js';
import { EXIT_FAILED, EXIT_OK, type CommandContext } from '../command-context.js';
import { applyConfiguration } from '../config/apply-configuration.js';
import { doctorJson, formatDoctorReport } from '../doctor/format-doctor.js';
import type { ModelToCheck } from '../doctor/types.js';
import { runDoctor, type DoctorProbes } from '../doctor/run-doctor.js';
import { systemSandboxProbes } from '../doctor/sandbox-checks.js';
import type { GitVersionOutput } from '../doctor/tool-versions.js';
import { postgresOptionsOf } from '../../orchestrator/setup/run-state.js';
import { probePostgresStore } from '../../store/postgres/postgres-probe.js';
import { DEFAULT_STATE_DIR_HELP, storeOption } from '../state-dir-flags.js';

interface DoctorFlags {
  readonly repo: string;
  readonly state?: string;
  readonly store?: string;
  readonly model: string;
  readonly plannerModel?: string;
  readonly baseUrl?: string;
  readonly apiKeyEnv?: string;
  readonly sandbox: SandboxMethod;
  readonly json?: boolean;
}

export function defineDoctorCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--repo <dir>', 'the git repository colony would work on', '.')
    .option('--state <dir>', `where colony would keep its state (${DEFAULT_STATE_DIR_HELP})`)
    .addOption(storeOption())
    .option('--model <spec>', "the workers' model to check, as colony run takes it", 'sim')
    .option('--planner-model <spec>', "the planners' model to check (default: the workers' model)")
    .option('--base-url <url>', 'the API base URL the models are reached at')
    .option('--api-key-env <name>', 'the environment variable holding the API key')
    .addOption(new Option('--sandbox <method>', "the sandbox to check, as colony run takes it").choices(['bubblewrap', 'unshare', 'none']).default('bubblewrap'))
    .option('--json', 'print the checks and the verdict as JSON')
    .action(async (_given: DoctorFlags, self: Command) => {
      // The models and sandbox checked are the ones colony run would use here: flags, then
      // COLONY_* variables, colony.toml and the user's file.
      const configured = applyConfiguration<DoctorFlags>(ctx, self);
      if (configured !== null) ctx.exitCode = await doctor(configured.ctx, configured.flags);
    });
}

async function doctor(ctx: CommandContext, flags: DoctorFlags): Promise<number> {
  const repoDir = resolve(ctx.cwd, flags.repo);
  const stateDir = flags.state === undefined ? defaultStateDir(repoDir) : resolve(ctx.cwd, flags.state);
  const models: ModelToCheck[] = [
    { spec: flags.model, roles: ['workers'], baseUrl: flags.baseUrl, apiKeyEnv: flags.apiKeyEnv },
    { spec: flags.plannerModel ?? flags.model, roles: ['planners'], baseUrl: flags.baseUrl, apiKeyEnv: flags.apiKeyEnv },
  ];
  const report = await runDoctor(
    { repoDir, stateDir, storeUrl: flags.store, sandbox: flags.sandbox, models, modelOptions: { env: ctx.env }, runId: `doctor-${process.pid}` },
    systemProbes(ctx),
  );
  ctx.stdout(flags.json === true ? doctorJson(report) : formatDoctorReport(report));
  return report.ok ? EXIT_OK : EXIT_FAILED;
}

function systemProbes(ctx: CommandContext): DoctorProbes {
  return {
    nodeVersion: process.versions.node,
    gitVersion,
    openRepository,
    statfs: (path) => statfs(path),
    probeOverlay: probeOverlaySupport,
    sandbox: systemSandboxProbes(ctx.env),
    // A store that does not answer is said within seconds, not after the run's retry window.
    probeStore: (url) => probePostgresStore({ ...postgresOptionsOf(url), retryMs: 3_000 }),
  };
}

function gitVersion(): Promise<GitVersionOutput> {
  return new Promise((done) => {
    execFile('git', ['--version'], { timeout: 10_000, encoding: 'utf8' }, (error, stdout) => {
      if (error === null) done({ ok: true, text: stdout });
      else done({ ok: false, error: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'git is not installed (not found on PATH)' : error.message });
    });
  });
}
