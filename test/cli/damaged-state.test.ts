import { statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { keepModules } from '../testing/small-goal.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

const RUN_TIMEOUT_MS = 300_000;

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
  keepModules(repo, ['src/strings/truncate.js']);
});

afterEach(() => {
  repo.cleanup();
});

describeRuns('a damaged state directory', () => {
  it('is named by every command that reads it, with how to start again; moved aside by colony clean --damaged as it says, the next run ends done and git status stays clean', async () => {
    const goal = join(repo.dir, 'GOAL.md');
    const first = await runCli(['run', goal, '--repo', repo.dir, '--model', 'sim', '--workers', '2', '--quiet']);
    expect(first.code, first.stderr).toBe(0);
    const stateDir = defaultStateDir(repo.dir);
    const database = join(stateDir, 'colony.db');
    // A copy cut short, or a disk that filled while another program wrote it.
    truncateSync(database, 1_000);

    for (const command of [['status'], ['events'], ['analyze'], ['green'], ['resume'], ['run', goal], ['say', 'Hello?'], ['andon'], ['clean']]) {
      const result = await runCli([...command, '--repo', repo.dir]);
      expect(result.code, command[0]).not.toBe(0);
      expect(result.stderr, command[0]).toContain(`${database} is damaged (SQLite reads: database disk image is malformed)`);
      expect(result.stderr, command[0]).toContain(`To start again and keep what is there, run: colony clean --damaged --state ${stateDir} `);
      expect(result.stderr, command[0]).not.toContain('internal error');
    }

    const moved = await runCli(['clean', '--damaged', '--repo', repo.dir, '--state', stateDir]);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain(`Moved the damaged state directory ${stateDir} aside to ${stateDir}.damaged`);
    const again = await runCli(['run', goal, '--repo', repo.dir, '--model', 'sim', '--workers', '2', '--quiet']);
    expect(again.code, again.stderr).toBe(0);
    expect(statSync(join(`${stateDir}.damaged`, 'colony.db')).size).toBe(1_000);
    expect(repo.git('status', '--porcelain')).toBe('');
  }, RUN_TIMEOUT_MS);
});
