import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { readLoggedEvents, runColonyProcess, waitForLoggedEvent } from '../testing/colony-process.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { keepModules } from '../testing/small-goal.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

const TEST_TIMEOUT_MS = 180_000;

let repo: ExampleRepository;
let stateDir: string;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
  keepModules(repo, ['src/strings/truncate.js', 'src/strings/case.js', 'src/numbers/clamp.js']);
  stateDir = defaultStateDir(repo.dir);
});

afterEach(() => {
  repo.cleanup();
});

interface GreenJson {
  live: boolean;
  commit: string;
  passed: boolean;
  failures: string[];
  culprits: { firstBad: string | null; subject: string; taskId: string | null }[];
  green: string | null;
}

describeRuns('colony green', () => {
  it('asks a running run for a snapshot, and with no run going takes it itself: green moves on a pass, and a break is traced to its commit', async () => {
    // A slowed run with no snapshots of its own: only the one asked for, and the release. It lands
    // on main, the branch checked out, so commits made there by hand are what the snapshots see.
    const run = runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--trunk', 'main', '--model', 'sim?seed=2&latency=150..300', '--workers', '1', '--green-every', 'off', '--quiet']);
    await waitForLoggedEvent(stateDir, (event) => event.type === 'merge.landed', 90_000);
    // Held, so the run cannot end before its loop answers: the request is what is tested, not a race.
    expect((await runColonyProcess(['andon', '--reason', 'a snapshot first', '--repo', repo.dir], repo.dir)).code).toBe(0);
    const asked = await runColonyProcess(['green', '--now', '--repo', repo.dir, '--json'], repo.dir);
    expect(asked.stderr).toBe('');
    const live = JSON.parse(asked.stdout) as GreenJson;
    // The sim writes right code: main passes after its first landing.
    expect(live).toMatchObject({ live: true, passed: true, failures: [] });
    expect(asked.code).toBe(0);
    expect((await runColonyProcess(['andon', '--release', '--repo', repo.dir], repo.dir)).code).toBe(0);
    expect((await run).code).toBe(0);
    const logged = readLoggedEvents(stateDir);
    const requested = logged.findIndex((event) => event.type === 'green.requested');
    const snapshot = logged.findIndex((event) => event.type === 'green.checked' && event.data.trigger === 'request');
    expect(requested).toBeGreaterThan(-1);
    expect(snapshot).toBeGreaterThan(requested);
    expect(logged.filter((event) => event.type === 'green.checked').map((event) => event.type === 'green.checked' && event.data.trigger)).toEqual(['request', 'release']);

    // The run is over: the snapshot is taken here, in the run's log, and passes on the run's last commit.
    const main = repo.git('rev-parse', 'main').trim();
    const passed = await runCli(['green', '--now', '--repo', repo.dir]);
    expect(passed.code, passed.stderr).toBe(0);
    expect(passed.stdout).toBe(`main at ${main.slice(0, 12)} passes \`node scripts/test.js\` (${/\(([\d.]+) s\)/.exec(passed.stdout)?.[1] ?? ''} s): green is at ${main.slice(0, 12)}.\n`);

    // Someone breaks main by hand: the snapshot fails, names the commit, and green stays.
    writeFileSync(join(repo.dir, 'src/numbers/clamp.js'), 'export function clamp(value) { return value; }\n');
    repo.git('commit', '-q', '-am', 'Simplify clamp');
    const broken = repo.git('rev-parse', 'main').trim();
    const failed = await runCli(['green', '--now', '--repo', repo.dir, '--json']);
    expect(failed.code).toBe(1);
    const red = JSON.parse(failed.stdout) as GreenJson;
    expect(red).toMatchObject({ live: false, commit: broken, passed: false, green: main });
    expect(red.failures.length).toBeGreaterThan(0);
    expect(red.failures.every((line) => line.includes('clamp('))).toBe(true);
    expect(red.culprits).toEqual([{ firstBad: broken, subject: 'Simplify clamp', taskId: null, plannerTaskId: null, failures: red.failures }]);
    expect(repo.git('rev-parse', 'green').trim()).toBe(main);

    // Fixed by hand again, and tagged as a release.
    repo.git('revert', '--no-edit', 'HEAD');
    const fixed = repo.git('rev-parse', 'main').trim();
    const released = await runCli(['green', '--now', '--repo', repo.dir, '--tag']);
    expect(released.code, released.stdout).toBe(0);
    expect(repo.git('rev-parse', 'green').trim()).toBe(fixed);
    expect(repo.git('rev-parse', 'green-1^{commit}').trim()).toBe(fixed);

    // A check of the user's own, and the health as `colony green` reads it.
    const own = await runCli(['green', '--now', '--repo', repo.dir, '--check', 'exit 3']);
    expect(own.code).toBe(1);
    expect(own.stdout).toContain('fails `exit 3`');
    const shown = await runCli(['green', '--repo', repo.dir]);
    expect(shown.stdout).toMatch(new RegExp(`^Green: ${fixed.slice(0, 12)} \\(\\d+ snapshots, \\d+ red`));
    const misused = await runCli(['green', '--repo', repo.dir, '--tag']);
    expect(misused.code).toBe(2);
    expect(misused.stderr).toContain('--check and --tag go with --now');
  }, TEST_TIMEOUT_MS);
});
