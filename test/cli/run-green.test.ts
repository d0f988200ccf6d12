import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { GREEN_FIXUP_OPENING } from '../../src/protocol/message-openings.js';
import { brokenOnPurposePaths } from '../../src/sim/reading/skip-tests-protocol.js';
import { createExampleRepository, projectTestsPass, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { expectGreenRun } from '../testing/run-checks.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

const RUN_TIMEOUT_MS = 240_000;

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
});

afterEach(() => {
  repo.cleanup();
});

async function allEvents(): Promise<ColonyEvent[]> {
  const listed = await runCli(['events', '--repo', repo.dir, '--json']);
  return listed.stdout
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ColonyEvent);
}

function dataOf<T extends ColonyEvent['type']>(events: readonly ColonyEvent[], type: T): Extract<ColonyEvent, { type: T }>[] {
  return events.filter((event): event is Extract<ColonyEvent, { type: T }> => event.type === type);
}

describeRuns('colony run with the green loop', () => {
  it('finds every break workers merged untested, bisects it to the commit the sim broke on purpose, tells its planner once, and ends green', async () => {
    // Workers are told to merge without testing; 30% of first attempts are wrong, so main really goes red.
    // The run lands on main, the branch checked out, so its checkout and green are the ones looked at.
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--trunk', 'main', '--model', 'sim?seed=1&bug=0.3&skiptests=1', '--workers', '4', '--green-every', '1']);
    expect(result.code, result.stderr).toBe(0);
    await expectGreenRun(repo);
    expect(projectTestsPass(repo.dir)).toBe(true);
    const events = await allEvents();

    // The sim's own record: the commits its workers landed knowing a module was wrong.
    const taskOfAgent = new Map(dataOf(events, 'agent.started').map((event) => [event.agentId, event.data.taskId]));
    const landedBy = new Map<string, string[]>();
    for (const event of dataOf(events, 'merge.landed')) {
      const task = taskOfAgent.get(event.agentId) ?? '';
      landedBy.set(task, [...(landedBy.get(task) ?? []), event.data.commit]);
    }
    const brokenOnPurpose = dataOf(events, 'handoff.submitted').flatMap((event) =>
      brokenOnPurposePaths(event.data.handoff.notes).length > 0 ? (landedBy.get(event.data.taskId) ?? []) : [],
    );
    expect(brokenOnPurpose.length).toBeGreaterThan(1);

    // Every break was detected and bisected to exactly that commit, and to no other.
    const bisected = dataOf(events, 'green.bisected');
    expect(new Set(bisected.map((event) => event.data.firstBad))).toEqual(new Set(brokenOnPurpose));
    const checks = dataOf(events, 'green.checked');
    expect(checks.some((event) => !event.data.passed && event.data.trigger === 'landings')).toBe(true);

    // One fix-up message per break, to the planner that owns the task, which received it.
    const reported = dataOf(events, 'green.reported');
    expect(reported.map((event) => event.data.firstBad).sort()).toEqual([...brokenOnPurpose].sort());
    for (const report of reported) {
      const culprit = bisected.find((event) => event.data.firstBad === report.data.firstBad);
      expect(report.data).toMatchObject({ taskId: culprit?.data.taskId, plannerTaskId: culprit?.data.plannerTaskId });
      expect(report.data.recipientTaskId).not.toBeNull();
    }
    const received = dataOf(events, 'message.received').filter((event) => event.data.content.startsWith(GREEN_FIXUP_OPENING));
    expect(received).toHaveLength(reported.length);

    // Fix tasks landed, and the release snapshot passed.
    const fixed = dataOf(events, 'task.created').filter((event) => event.data.title.startsWith('Fix '));
    expect(fixed.length).toBeGreaterThan(0);
    const release = checks.at(-1);
    expect(release?.data).toMatchObject({ trigger: 'release', passed: true });

    // green only ever moved to commits whose check passed, forward, and ends on main's last commit.
    const passing = new Set(checks.filter((event) => event.data.passed).map((event) => event.data.commit));
    const advanced = dataOf(events, 'green.advanced');
    expect(advanced.length).toBeGreaterThan(0);
    for (const move of advanced) {
      expect(passing.has(move.data.to)).toBe(true);
      if (move.data.from !== null) expect(() => repo.git('merge-base', '--is-ancestor', move.data.from ?? '', move.data.to)).not.toThrow();
    }
    const main = repo.git('rev-parse', 'main').trim();
    expect(repo.git('rev-parse', 'green').trim()).toBe(main);

    // Main's health over the run, as a person and a script see it.
    const status = JSON.parse((await runCli(['status', '--repo', repo.dir, '--json'])).stdout) as {
      green: { commit: string; redShare: number; snapshots: number; meanTimeToGreenS: number | null; redSnapshots: number };
    };
    expect(status.green).toMatchObject({ commit: main, snapshots: checks.length });
    expect(status.green.redSnapshots).toBeGreaterThan(0);
    expect(status.green.redShare).toBeGreaterThan(0);
    expect(status.green.redShare).toBeLessThan(1);
    expect(status.green.meanTimeToGreenS).toBeGreaterThan(0);
    expect(result.stdout).toMatch(/\ngreen: [0-9a-f]{12} \(\d+ snapshots, \d+ red; main red/);
  }, RUN_TIMEOUT_MS);

  it('refuses a green branch that is the trunk, or a name git does not take, before anything is made', async () => {
    for (const [branch, said] of [['main', 'that is the branch colony lands work on'], ['bad..name', 'is not a branch name git accepts']] as const) {
      const refused = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--green-branch', branch]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`--green-branch: `);
      expect(refused.stderr).toContain(said);
    }
    expect(repo.git('branch', '--list').trim()).toBe('* main');
  });
});
