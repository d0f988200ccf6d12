import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRecorder } from '../agent/agent-loop.js';
import { parseScenario } from '../model/sim/scenario.js';

import { newShortId } from '../events/ids.js';
import type { CommandRunners } from './command-sandbox.js';
import { createMainView, type MainView } from '../workspace/main-view.js';
import type { Repository } from '../workspace/repository.js';

/** The project's check command runs for at most this long at the end of a run. */
const CHECK_TIMEOUT_MS = 15 * 60_000;

/**
 * The command that says whether the project works: the goal's colony-spec `project.test`, else
 * `npm test` when the package.json in `dir` has a test script; null when neither says.
 */
export function projectCheckCommand(goal: string, dir: string): string | null {
  if (goal.includes('```colony-spec')) {
    const scenario = parseScenario(goal);
    if (scenario.ok) return scenario.scenario.project.test;
  }
  const packagePath = join(dir, 'package.json');
  if (!existsSync(packagePath)) return null;
  try {
    const manifest = JSON.parse(readFileSync(packagePath, 'utf8')) as { scripts?: Record<string, unknown> };
    return typeof manifest.scripts?.test === 'string' ? 'npm test' : null;
  } catch {
    return null;
  }
}

export interface MainCheck {
  readonly command: string;
  readonly commit: string;
  readonly passed: boolean;
}

/**
 * Runs the project's check command (see `projectCheckCommand`, read from the trunk as it is
 * now, not from the user's checkout) on the trunk's latest commit, in a view of its own, and
 * records the outcome. Null when no check command is known.
 */
export async function checkMain(
  repo: Repository,
  goal: string,
  viewsDir: string,
  recorder: AgentRecorder,
  signal: AbortSignal,
  commands: CommandRunners,
): Promise<MainCheck | null> {
  let view: MainView;
  try {
    view = await createMainView(repo, { id: newShortId('check'), parentDir: viewsDir });
  } catch (error) {
    const reason = `colony could not check out ${repo.trunk} to run the check: ${error instanceof Error ? error.message : String(error)}`;
    const command = projectCheckCommand(goal, repo.root) ?? '(the project check)';
    recorder.record({
      type: 'main.checked',
      data: { command, commit: '', passed: false, exitCode: null, timedOut: false, durationMs: 0, outputTail: reason },
    });
    return { command, commit: '', passed: false };
  }
  try {
    const command = projectCheckCommand(goal, view.path);
    if (command === null) return null;
    const result = await commands.forAgent('system', view.path)({ command, cwd: view.path, timeoutMs: CHECK_TIMEOUT_MS, signal });
    const passed = result.exitCode === 0 && result.startError === null;
    const tail = (result.startError ?? result.output).split('\n').filter((line) => line.trim() !== '').slice(-20).join('\n');
    recorder.record({
      type: 'main.checked',
      data: {
        command,
        commit: view.commit(),
        passed,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        durationMs: Math.round(result.durationMs),
        outputTail: tail,
      },
    });
    recorder.flush();
    return { command, commit: view.commit(), passed };
  } finally {
    await view.remove();
  }
}
