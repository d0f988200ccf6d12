import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { writeLongScenario } from '../../src/sim/scenario/long-scenario.js';
import { runCli } from '../testing/example-repository.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

/** Two runs of sixty modules; each takes tens of seconds, more on a loaded machine. */
const RUN_TIMEOUT_MS = 400_000;
const WINDOW = 48_000;
/** The sim refuses any request over its window, as a provider does. */
const MODEL = `sim?seed=5&context=${WINDOW}`;

let dir: string;
let goalPath: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'colony-compaction-'));
  // Agents' commands run as other users: they must be let through to the repository.
  chmodSync(dir, 0o711);
  ({ goalPath } = await writeLongScenario(join(dir, 'repo'), 60));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function eventsOf(repo: string, types: string): Promise<ColonyEvent[]> {
  const listed = await runCli(['events', '--repo', repo, '--json', '--type', types]);
  return listed.stdout.trim().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as ColonyEvent);
}

describeRuns('compaction keeps a long-running planner alive', () => {
  it('a root planner that hears back from sixty tasks stays inside a small window by summarising, and the run ends green; without compaction it outgrows the window and fails', async () => {
    const repo = join(dir, 'repo');
    const kept = await runCli(['run', goalPath, '--repo', repo, '--model', MODEL, '--workers', '8', '--json']);
    expect(kept.stderr).toBe("");
    expect(kept.code).toBe(0);
    expect(JSON.parse(kept.stdout)).toMatchObject({ status: 'done', check: { passed: true } });
    const events = await eventsOf(repo, 'agent.started,model.responded,model.failed,context.compacted,context.compaction-failed');
    const root = events.find((event) => event.type === 'agent.started' && event.data.role === 'root-planner')?.agentId;
    const compacted = events.filter((event) => event.type === 'context.compacted');
    expect(compacted.length).toBeGreaterThan(0);
    expect(compacted.every((event) => event.agentId === root)).toBe(true);
    // colony kept the planner under the window by its own count, and the provider never had to refuse a request.
    expect(compacted.every((event) => event.type === 'context.compacted' && event.data.afterTokens <= WINDOW * 0.8)).toBe(true);
    expect(events.filter((event) => event.type === 'context.compaction-failed' || event.type === 'model.failed')).toEqual([]);
    const answered = events.flatMap((event) => (event.type === 'model.responded' ? [event] : []));
    const rootSteps = Math.max(...answered.filter((event) => event.agentId === root).map((event) => event.data.step));
    expect(rootSteps).toBeGreaterThan(20);
    const status = await runCli(['status', '--repo', repo]);
    expect(status.stdout).toMatch(/Compactions: \d+ \([\d,]+ tokens, \d+\.\d% of all\)/);

    // The same goal and model, compaction off: the root planner's conversation outgrows the window.
    const fresh = join(dir, 'again');
    const again = await writeLongScenario(fresh, 60);
    const lost = await runCli(['run', again.goalPath, '--repo', fresh, '--model', MODEL, '--workers', '8', '--no-compaction', '--json']);
    expect(lost.code).toBe(1);
    const failed = (await eventsOf(fresh, 'agent.failed,context.compacted')).filter((event) => event.type === 'agent.failed');
    expect(failed.some((event) => event.type === 'agent.failed' && /context_length_exceeded/.test(event.data.reason))).toBe(true);
    expect((await eventsOf(fresh, 'context.compacted')).length).toBe(0);
    // A run that failed for good leaves no workspace behind: its stopped workers' work was salvaged under colony's refs.
    expect(readdirSync(join(defaultStateDir(fresh), 'workspaces')).filter((name) => name.startsWith('worker-'))).toEqual([]);
    expect((await eventsOf(fresh, 'workspace.swept')).length).toBeGreaterThan(0);
  }, RUN_TIMEOUT_MS);
});
