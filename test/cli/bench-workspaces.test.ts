import { tmpdir } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { probeOverlaySupport } from '../../src/workspace/providers/overlay/overlay-probe.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';

const overlay = await probeOverlaySupport(tmpdir());

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository();
});

afterEach(() => {
  repo.cleanup();
});

describe('colony bench workspaces', () => {
  const methods = overlay.ok ? ['worktree', 'overlay'] : ['worktree'];

  it.each(methods)('makes, measures and removes %s workspaces, printing the figures as JSON', async (method) => {
    const result = await runCli(['bench', 'workspaces', '--repo', repo.dir, '--count', '3', '--method', method, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const figures = JSON.parse(result.stdout) as Record<string, number | string>;
    expect(figures).toMatchObject({ count: 3, method, msPerWorkspace: expect.any(Number), bytesPerWorkspace: expect.any(Number) });
    expect(figures.bytesPerWorkspace).toBeGreaterThan(0);
    // Nothing of the benchmark is left in the repository.
    expect(repo.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(repo.git('branch', '--list', 'colony/*')).toBe('');
  });

  it('refuses a method it does not know', async () => {
    const result = await runCli(['bench', 'workspaces', '--repo', repo.dir, '--method', 'copy']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Allowed choices are auto, overlay, worktree/);
  });
});
