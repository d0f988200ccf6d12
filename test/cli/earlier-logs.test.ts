import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runColonyProcess, readLoggedEvents } from '../testing/colony-process.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

/**
 * Runs recorded by colony at event version 1, before the rooms and renames: text-kit run to its
 * end, and text-kit killed (SIGKILL) with two workers at work. Each tarball holds the repository
 * with its `.colony` as the run left it. Logs and git's worktree records name the directory the
 * run worked in, so they are unpacked where they were recorded, as a user's repository stays
 * where it is when colony is upgraded.
 */
const RECORDED_AT = '/tmp/colony-log-fixture';
const FINISHED = `${RECORDED_AT}/finished`;
const CRASHED = `${RECORDED_AT}/crashed`;
const tarball = (name: string) => fileURLToPath(new URL(`../testing/logs/text-kit-${name}.tar.gz`, import.meta.url));

describeRuns('a log an earlier colony recorded', () => {
  beforeAll(() => {
    rmSync(RECORDED_AT, { recursive: true, force: true });
    mkdirSync(RECORDED_AT, { mode: 0o755 });
    for (const name of ['finished', 'crashed']) execFileSync('tar', ['xzf', tarball(name), '-C', RECORDED_AT]);
  });
  afterAll(() => rmSync(RECORDED_AT, { recursive: true, force: true }));

  it('was written at event version 1, so these tests hold today’s code to it', () => {
    for (const repo of [FINISHED, CRASHED]) {
      const events = readLoggedEvents(`${repo}/.colony`);
      expect(events.length).toBeGreaterThan(20);
      expect(new Set(events.map((event) => event.v))).toEqual(new Set([1]));
    }
  });

  it('reads a finished run with colony status and colony replay --json', async () => {
    const status = await runColonyProcess(['status', '--json'], FINISHED);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      run: { state: 'done', mode: 'run', title: 'text-kit', repo: FINISHED },
      tasks: { total: 6, byStatus: { done: 6, failed: 0 } },
      handoffs: { delivered: 6 },
      commits: { landed: 6 },
    });
    const replay = await runColonyProcess(['replay', '--json'], FINISHED);
    expect(replay.code).toBe(0);
    const view = JSON.parse(replay.stdout) as { status: { run: { state: string } }; lastSeq: number; tasks: unknown[] };
    expect(view.status.run.state).toBe('done');
    expect(view.lastSeq).toBe(readLoggedEvents(`${FINISHED}/.colony`).at(-1)?.seq);
  });

  it('reads a crashed run as interrupted, and colony resume gives its tasks back to their agents and ends it done', async () => {
    const before = await runColonyProcess(['status', '--json'], CRASHED);
    expect(before.code).toBe(0);
    expect(JSON.parse(before.stdout)).toMatchObject({ run: { state: 'interrupted', resumes: 0 } });
    const recorded = readLoggedEvents(`${CRASHED}/.colony`);
    const ended = new Set(recorded.flatMap((event) => (event.type === 'agent.ended' ? [event.agentId] : [])));
    const atWork = recorded.flatMap((event) => (event.type === 'agent.started' && event.data.role === 'worker' && !ended.has(event.agentId) ? [event.agentId] : []));
    expect(atWork).toHaveLength(2);

    const resumed = await runColonyProcess(['resume'], CRASHED);
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = await runColonyProcess(['status', '--json'], CRASHED);
    expect(JSON.parse(after.stdout)).toMatchObject({
      run: { state: 'done', resumes: 1 },
      tasks: { total: 6, byStatus: { done: 6, failed: 0 } },
      commits: { landed: 6 },
    });
    const restored = readLoggedEvents(`${CRASHED}/.colony`).flatMap((event) => (event.type === 'agent.restored' ? [event.agentId] : []));
    expect(restored).toEqual(expect.arrayContaining(atWork));
  }, 180_000);
});
