import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { keepModules } from '../testing/small-goal.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

const RUN_TIMEOUT_MS = 180_000;

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
  keepModules(repo, ['src/numbers/clamp.js']);
  writeFileSync(join(repo.dir, 'colony.toml'), 'workers = 2\nmodel = "sim?seed=8"\n');
  repo.git('add', 'colony.toml');
  repo.git('commit', '-q', '-m', 'colony settings');
});

afterEach(() => {
  repo.cleanup();
});

/** The settings the latest run in the repository recorded. */
async function recordedSettings(): Promise<{ workers: number; workerModel: string; plannerModel: string }> {
  const events = (await runCli(['events', '--repo', repo.dir, '--json', '--type', 'run.configured'])).stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as ColonyEvent);
  const configured = events.filter((event) => event.type === 'run.configured').at(-1);
  if (configured?.type !== 'run.configured') throw new Error('no run.configured event');
  return configured.data.settings;
}

describeRuns('colony run with a colony.toml', () => {
  it('runs with the workers and model of the file, a flag overriding them, and colony config says where each came from', async () => {
    const fromFile = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--quiet']);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(await recordedSettings()).toMatchObject({ workers: 2, workerModel: 'sim?seed=8', plannerModel: 'sim?seed=8' });

    const overridden = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--quiet', '--workers', '1']);
    expect(overridden.code, overridden.stderr).toBe(0);
    expect(await recordedSettings()).toMatchObject({ workers: 1, workerModel: 'sim?seed=8' });

    const config = await runCli(['config', '--repo', repo.dir, '--workers', '1']);
    expect(config.stdout).toMatch(/\n {2}workers +1 +flag --workers\n/);
    expect(config.stdout).toMatch(new RegExp(`\\n  model +"sim\\?seed=8" +${join(repo.dir, 'colony.toml').replace(/[.?]/g, '\\$&')}\\n`));

    writeFileSync(join(repo.dir, 'colony.toml'), 'workers = 2\nwrokers = 3\n');
    const refused = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--quiet']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${join(repo.dir, 'colony.toml')}: there is no setting "wrokers" at the top of the file; did you mean "workers"?`);
  }, RUN_TIMEOUT_MS);
});
