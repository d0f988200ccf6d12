import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { readLoggedEvents, runCliUntilLanded } from '../testing/colony-process.js';
import { keepModules } from '../testing/small-goal.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

const RUN_TIMEOUT_MS = 300_000;
const MODEL = 'sim?seed=4&latency=20..60';

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
});

afterEach(() => {
  repo.cleanup();
});

describe('colony run: how the goal is given', () => {
  it('refuses neither a goal file nor --goal, and both at once, with exit 2 and how to give it', async () => {
    const neither = await runCli(['run', '--repo', repo.dir]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('colony run needs a goal: a Markdown file, or the text with --goal.');
    expect(neither.stderr).toContain('colony run --goal "Build ...".');
    const both = await runCli(['run', join(repo.dir, 'GOAL.md'), '--goal', '# Build it', '--repo', repo.dir]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain(`was given both a goal file (${join(repo.dir, 'GOAL.md')}) and --goal`);
    expect(existsSync(join(defaultStateDir(repo.dir), 'colony.db'))).toBe(false);
  });

  it('refuses a goal over 16 MB before reading it, naming --max-goal-size; the flag raises the cap, and an inline goal is held to it', async () => {
    const big = join(repo.dir, 'BIG.md');
    writeFileSync(big, '# A huge goal\n');
    truncateSync(big, 16 * 1024 * 1024 + 1);
    const refused = await runCli(['run', big, '--repo', repo.dir, '--quiet']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`the goal file ${big} is 16.0 MB, more than the 16.0 MB colony reads`);
    expect(refused.stderr).toContain('raise the cap with --max-goal-size 17M');
    expect(existsSync(join(defaultStateDir(repo.dir), 'colony.db'))).toBe(false);

    const goal = readFileSync(join(repo.dir, 'GOAL.md'), 'utf8');
    const small = await runCli(['run', '--goal', goal, '--max-goal-size', '1K', '--repo', repo.dir, '--quiet']);
    expect(small.code).toBe(2);
    expect(small.stderr).toMatch(/the goal given with --goal is \d+\.\d KB, more than the 1\.0 KB colony reads: check that it is the text you meant, shorten it, or raise the cap with --max-goal-size 1M/);

    const badSize = await runCli(['run', '--goal', goal, '--max-goal-size', 'lots', '--repo', repo.dir]);
    expect(badSize.code).not.toBe(0);
    expect(badSize.stderr).toContain('expected a size such as 500M or 2G, got "lots"');
  });

  it('refuses a goal file that is not UTF-8 text, as before', async () => {
    const latin1 = join(repo.dir, 'LATIN1.md');
    writeFileSync(latin1, Buffer.from('# Caf\xe9\n', 'latin1'));
    const refused = await runCli(['run', latin1, '--repo', repo.dir, '--quiet']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is not text (it is not UTF-8, or it holds NUL bytes)');
  });
});

describeRuns('colony run --goal', () => {
  it('keeps an inline goal in the state directory, records it as the goal file, and a stopped run resumes from it to done', async () => {
    keepModules(repo, ['src/strings/truncate.js', 'src/strings/case.js', 'src/numbers/clamp.js']);
    const goal = readFileSync(join(repo.dir, 'GOAL.md'), 'utf8');
    const stopped = await runCliUntilLanded(['run', '--goal', goal, '--repo', repo.dir, '--model', MODEL, '--workers', '2', '--quiet'], defaultStateDir(repo.dir));
    expect(stopped.code, stopped.stderr).toBe(1);
    const before = readLoggedEvents(defaultStateDir(repo.dir));
    const configured = before.find((event) => event.type === 'run.configured');
    const settings = configured?.type === 'run.configured' ? configured.data.settings : null;
    expect(settings?.goalSource).toBe('inline');
    expect(settings?.goalPath).toMatch(new RegExp(`^${join(defaultStateDir(repo.dir), 'goals')}/goal-[a-z0-9]+\\.md$`));
    expect(readFileSync(settings?.goalPath ?? '', 'utf8')).toBe(goal);
    const root = before.find((event) => event.type === 'agent.started' && event.data.role === 'root-planner');
    expect(root?.type === 'agent.started' ? root.data.task : '').toBe(goal);

    const resumed = await runCli(['resume', '--repo', repo.dir, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'done', check: { passed: true } });
    const after = readLoggedEvents(defaultStateDir(repo.dir));
    // The goal file was read as it stands, unchanged: nothing was told as an edit of the goal.
    expect(after.filter((event) => event.type === 'goal.changed')).toEqual([]);
    expect(after.filter((event) => event.type === 'merge.landed').length).toBe(3);
  }, RUN_TIMEOUT_MS);
});
