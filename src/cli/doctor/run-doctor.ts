import type { SandboxMethod } from '../../sandbox/types.js';
import type { OpenRepositoryResult } from '../../workspace/git/repository.js';
import type { OverlaySupport } from '../../workspace/providers/overlay/overlay-probe.js';
import { checkModels } from './model-check.js';
import { checkRepository, checkRepositoryPath } from './repository-checks.js';
import { checkSandbox, type SandboxProbes } from './sandbox-checks.js';
import { checkDisk, checkOverlay, checkStateDir, type FileSystemSpace } from './state-checks.js';
import { checkStore, type StoreProbeResult } from './store-check.js';
import { checkGit, checkNode, type GitVersionOutput } from './tool-versions.js';
import type { DoctorCheck, DoctorReport, ModelCheckOptions, ModelToCheck } from './types.js';

/** Everything the checks look at on the machine, passed in so a test can make each one fail. */
export interface DoctorProbes {
  readonly nodeVersion: string;
  readonly gitVersion: () => Promise<GitVersionOutput>;
  readonly openRepository: (dir: string) => Promise<OpenRepositoryResult>;
  readonly statfs: (path: string) => Promise<FileSystemSpace>;
  readonly probeOverlay: (dir: string) => Promise<OverlaySupport>;
  readonly sandbox: SandboxProbes;
  /** Connects to a PostgreSQL store once and reads what a run needs of it. */
  readonly probeStore: (url: string) => Promise<StoreProbeResult>;
}

/** What to check: the flags `colony run` would be given. */
export interface DoctorRequest {
  readonly repoDir: string;
  readonly stateDir: string;
  /** The PostgreSQL store the run's log would be in, when not in the state directory. */
  readonly storeUrl?: string | undefined;
  readonly sandbox: SandboxMethod;
  readonly models: readonly ModelToCheck[];
  readonly modelOptions: ModelCheckOptions;
  /** Names the cgroups and the test command of the sandbox check. */
  readonly runId: string;
}

/**
 * Runs every check, in the order a person fixes things: the programs colony needs, the
 * repository and where its state goes (the store too, when one is named), the sandbox, then the models. One failure does not
 * stop the others, so one run of the doctor lists everything to fix.
 */
export async function runDoctor(request: DoctorRequest, probes: DoctorProbes): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [checkNode(probes.nodeVersion), checkGit(await probes.gitVersion())];
  const opened = await probes.openRepository(request.repoDir);
  checks.push(checkRepository(request.repoDir, opened));
  if (opened.ok) checks.push(checkRepositoryPath(opened.repo, request.stateDir, request.sandbox, probes.sandbox));
  checks.push(await checkStateDir(request.stateDir));
  checks.push(await checkDisk(request.stateDir, probes.statfs));
  if (request.storeUrl !== undefined) checks.push(await checkStore(request.storeUrl, probes.probeStore));
  checks.push(...(await checkSandbox(request.sandbox, probes.sandbox, request.runId)));
  checks.push(await checkOverlay(request.stateDir, probes.probeOverlay));
  checks.push(...(await checkModels(request.models, request.modelOptions)));
  return { checks, ok: checks.every((check) => check.status !== 'fail') };
}
