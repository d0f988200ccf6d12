import { newShortId } from '../../events/ids.js';
import { lateRecorder, openCommandRunners, type CommandRunners, type LateRecorder } from '../setup/command-sandbox.js';
import type { PreparedSession } from './session-prelude.js';
import { dependencyCacheDir } from '../setup/shared-dependencies.js';
import { viewsDirOf, workspacesDirOf } from '../setup/state-directory.js';
import { DEFAULT_SANDBOX_SETTINGS, type SandboxSettings } from '../../events/run-settings.js';

/** What a session's body gets: its run id, the runners for its agents' commands, and a recorder for what the sandbox reports before the run's own exists. */
export interface SessionCommands {
  readonly runId: string;
  readonly commands: CommandRunners;
  readonly late: LateRecorder;
}

/**
 * Opens the sandbox for a session (`colony run`, `colony work`) before anything of the run is
 * recorded, runs `body`, and closes the sandbox after it, whatever happens. A sandbox that
 * cannot confine commands here ends the session before it starts, with the reason and the fix.
 */
export async function withSessionCommands<Result>(
  session: Extract<PreparedSession, { ok: true }>,
  settings: SandboxSettings | undefined,
  body: (opened: SessionCommands) => Promise<Result>,
  /** The run's id when it already has one (`colony resume`); a new one otherwise. */
  existingRunId?: string,
): Promise<Result | { readonly ok: false; readonly error: string }> {
  const runId = existingRunId ?? newShortId('run');
  const late = lateRecorder();
  const opened = await openCommandRunners({
    settings: settings ?? DEFAULT_SANDBOX_SETTINGS,
    runId,
    repo: session.repo,
    stateDir: session.stateDir,
    workDirs: [dependencyCacheDir(session.stateDir), workspacesDirOf(session.stateDir), viewsDirOf(session.stateDir)],
    record: late.record,
  });
  if (!opened.ok) return opened;
  try {
    return await body({ runId, commands: opened.runners, late });
  } finally {
    await opened.runners.close();
  }
}
