import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { writeLongScenario } from '../../src/sim/scenario/long-scenario.js';
import { LARGE_BRIEF_FILE } from '../../src/protocol/message-openings.js';
import { runCli } from '../testing/example-repository.js';
import { readLoggedEvents } from '../testing/colony-process.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

/** The window of every agent of the run, in tokens: the goal below is larger than it. */
const WINDOW = 12_000;
const MODULES = 40;

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colony-paged-goal-'));
  // Agents' commands run as other users, who must get through to the repository.
  chmodSync(dir, 0o711);
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The long scenario's goal with a long background section before its colony-spec, so the goal
 * (some 14,000 tokens) outgrows a window of 12,000 while its 40 modules stay a short run: the
 * planner has to page through the prose to reach the module list.
 */
async function largeGoal(): Promise<{ repo: string; goal: string; text: string }> {
  const repo = join(dir, 'repo');
  const { goalPath } = await writeLongScenario(repo, MODULES);
  const written = readFileSync(goalPath, 'utf8');
  const background = Array.from({ length: 420 }, (_, index) => `- Note ${index + 1}: the helpers stay small, pure and dependency-free, and each answers exactly the cases listed.`);
  const fence = written.indexOf('```colony-spec');
  const text = `${written.slice(0, fence)}## Background\n\n${background.join('\n')}\n\n${written.slice(fence)}`;
  const goal = join(dir, 'GOAL.md');
  writeFileSync(goal, text);
  return { repo, goal, text };
}

describeRuns('colony run on a goal larger than the context window', () => {
  it('gives the root planner the opening and the goal as a file it pages through, and builds every module to done', async () => {
    const { repo, goal, text } = await largeGoal();
    expect(text.length / 4).toBeGreaterThan(WINDOW);
    const model = `sim?seed=3&context=${WINDOW}`;
    const result = await runCli(['run', goal, '--repo', repo, '--model', model, '--workers', '8', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'done', check: { passed: true } });

    const events = readLoggedEvents(defaultStateDir(repo));
    const root = events.find((event) => event.type === 'agent.started' && event.data.role === 'root-planner');
    const brief = root?.type === 'agent.started' ? root.data.task : '';
    expect(brief.startsWith('# A long run\n')).toBe(true);
    expect(brief).toContain(`The whole goal is the file \`${LARGE_BRIEF_FILE}\``);
    expect(brief.length).toBeLessThan(text.length / 4);
    // It read the goal in parts, by line ranges, and no request outgrew the window.
    const reads = events.filter(
      (event) => event.type === 'tool.started' && event.agentId === root?.agentId && event.data.name === 'read_file' && event.data.input.includes(LARGE_BRIEF_FILE),
    );
    expect(reads.length).toBeGreaterThan(3);
    expect(events.filter((event) => event.type === 'merge.landed').length).toBeGreaterThanOrEqual(MODULES);
    // Every module is exported from the branch the run landed on.
    const started = events.find((event) => event.type === 'run.started');
    const trunk = started?.type === 'run.started' ? started.data.trunk?.branch : undefined;
    expect(trunk).toMatch(/^colony\//);
    const index = execFileSync('git', ['show', `${trunk ?? ''}:src/index.js`], { cwd: repo, encoding: 'utf8' });
    expect(index.match(/^export \* from/gm)?.length).toBe(MODULES);
  }, 600_000);
});
