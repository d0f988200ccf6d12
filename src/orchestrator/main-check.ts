import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRecorder } from '../agent/agent-loop.js';
import { parseScenario } from '../model/sim/scenario.js';
import { runProcess } from '../sandbox/process-runner.js';
import { newShortId } from '../events/ids.js';
import { createMainView } from '../workspace/main-view.js';
import type { Repository } from '../workspace/repository.js';

/** The project's check command runs for at most this long at the end of a run. */
const CHECK_TIMEOUT_MS = 15 * 60_000;

/**
 * The command that says whether the project works: the goal's colony-spec `project.test`, else
 * `npm test` when the repository's package.json has a test script; null when neither says.
 */
export function projectCheckCommand(goal: string, repoRoot: string): string | null {
  if (goal.includes('```colony-spec')) {
    const scenario = parseScenario(goal);
    if (scenario.ok) return scenario.scenario.project.test;
  }
  const packagePath = join(repoRoot, 'package.json');
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

/** Runs `command` on the trunk's latest commit, in a view of its own, and records the outcome. */
export async function checkMain(repo: Repository, command: string, viewsDir: string, recorder: AgentRecorder, signal: AbortSignal): Promise<MainCheck> {
  const view = await createMainView(repo, { id: newShortId('check'), parentDir: viewsDir });
  try {
    const result = await runProcess({ command, cwd: view.path, timeoutMs: CHECK_TIMEOUT_MS, signal });
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
