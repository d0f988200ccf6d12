import { afterAll, describe, expect, it } from 'vitest';
import { confinedTestsUnavailable } from '../../src/sandbox/testing/confined-test-support.js';
import { chaosProblems } from '../testing/chaos-checks.js';
import { runCgroups, runWithKills, type ChaosOutcome } from '../testing/chaos-run.js';

const KILLS = 10;
const cannotConfine = confinedTestsUnavailable('bubblewrap');

/**
 * The durability promise, end to end: `colony run` on a bundled example is SIGKILLed ten times
 * at moments aimed at model calls, commands, merges, handoff deliveries and publishing, resumed
 * with `colony resume` each time, and then let finish. The run must end done with nothing lost
 * or done twice, and nothing of it may outlive it.
 */
describe.skipIf(cannotConfine !== null)('a run killed at random moments and resumed', () => {
  let outcome: ChaosOutcome | null = null;
  afterAll(() => outcome?.repo.cleanup());

  it(`ends green after ${KILLS} SIGKILLs, with every task handed off once and no commit landed twice`, { timeout: 600_000 }, async () => {
    outcome = await runWithKills({ example: 'toolbox', model: 'sim?seed=11&latency=100..300', workers: 3, kills: KILLS, seed: 5, runFlags: ['--no-shared-deps'] });
    const { kills } = outcome;
    expect(kills.length, outcome.output).toBe(KILLS);
    expect(outcome.exitCode, outcome.output).toBe(0);
    // The kills landed in different phases of the run, not all in one.
    expect(new Set(kills.map((kill) => kill.landedAfter)).size, JSON.stringify(kills.map((kill) => [kill.phase, kill.landedAfter]))).toBeGreaterThanOrEqual(4);
    expect(await chaosProblems(outcome.repo.dir, outcome.stateDir, outcome.runId)).toEqual([]);
    // Nothing outlived a kill, nor the run: no process of the run's uids, no cgroup of the run.
    expect(kills.flatMap((kill) => kill.leftovers)).toEqual([]);
    expect(outcome.leftoversAtEnd).toEqual([]);
    expect(runCgroups(outcome.runId)).toEqual([]);
  });
});
