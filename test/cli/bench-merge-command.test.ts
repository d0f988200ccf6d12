import { describe, expect, it } from 'vitest';
import { runCli } from '../testing/example-repository.js';

describe('colony bench merge', { timeout: 90_000 }, () => {
  it.each([
    [['--mergers', '0'], "option '--mergers <k>' argument '0' is invalid. expected a positive whole number"],
    [['--mergers', '2.5'], "option '--mergers <k>' argument '2.5' is invalid"],
    [['--shared', '1.5'], "option '--shared <f>' argument '1.5' is invalid. expected a number from 0 to 1"],
    [['--shared', '-0.1'], "option '--shared <f>' argument '-0.1' is invalid. expected a number from 0 to 1"],
    [['--shared', 'half'], "option '--shared <f>' argument 'half' is invalid"],
    [['--seconds', '0'], "option '--seconds <s>' argument '0' is invalid. expected a number of seconds above 0"],
    [['--seconds', ''], "option '--seconds <s>' argument '' is invalid"],
    [['--resolve-ms', '-1'], "option '--resolve-ms <ms>' argument '-1' is invalid. expected a whole number of at least 0"],
    [['--insert-share', '2'], "option '--insert-share <p>' argument '2' is invalid"],
  ])('refuses %j as bad usage, saying what was wrong', async (flags, message) => {
    const result = await runCli(['bench', 'merge', ...flags, '--json']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });

  it('prints the figures as one JSON object and exits 0 when the check passes', async () => {
    const result = await runCli(['bench', 'merge', '--mergers', '2', '--shared', '0.5', '--seconds', '1', '--resolve-ms', '10', '--files', '20', '--json']);
    expect(result.code).toBe(0);
    const figures = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(figures).toMatchObject({ mode: 'self-merge', mergers: 2, shared: 0.5, resolveMs: 10, check: { passed: true, problems: [] } });
    for (const key of ['seconds', 'landed', 'commitsPerHour', 'retriesPerCommit', 'conflicts', 'resolvedMechanically', 'mergersLanded', 'lastQuarterPerHour', 'waitShare']) {
      expect(typeof figures[key]).toBe('number');
    }
    expect(result.stderr).toMatch(/scratch repository with 21 files and 2 workspaces ready/);
  });

  it('prints a readable summary without --json, for the integrator too', async () => {
    const result = await runCli(['bench', 'merge', '--integrator', '--mergers', '2', '--seconds', '1', '--files', '20']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^colony bench merge: integrator, 2 mergers, shared 0, 1 s/);
    expect(result.stdout).toContain('check       passed');
  });
});
