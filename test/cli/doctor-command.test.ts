import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

/** `colony doctor` as a person runs it: the real machine, a real repository, a real HTTP server. */
const LINE = /^(pass|warn|fail) {2}\S.*?: \S.*$/;
const FIX = /^ {6}fix: \S.*$/;
const KEY = 'sk-doctor-cli-0123456789abcdef';

let repo: ExampleRepository;
let plain: string;
let refusing: Server;
let refusingUrl: string;

beforeAll(async () => {
  repo = createExampleRepository();
  plain = mkdtempSync(join(tmpdir(), 'colony-doctor-plain-'));
  refusing = createServer((_request, response) => {
    response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"Incorrect API key provided"}}');
  });
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  const address = refusing.address();
  if (address === null || typeof address === 'string') throw new Error('the test server has no port');
  refusingUrl = `http://127.0.0.1:${address.port}/v1`;
});

afterAll(async () => {
  repo.cleanup();
  rmSync(plain, { recursive: true, force: true });
  await new Promise((resolve) => refusing.close(resolve));
});

/** The printed lines, each checked against the format: a check's line, a fix under a failure or warning, the verdict last. */
function linesOf(stdout: string, stderr = ''): string[] {
  const lines = stdout.trimEnd().split('\n');
  lines.slice(0, -1).forEach((line, index) => {
    if (FIX.test(line)) expect(lines[index - 1]).toMatch(/^(warn|fail) /);
    else expect(line).toMatch(LINE);
  });
  // What colony said instead, when it printed no verdict.
  expect(lines.at(-1), stderr).toMatch(/^verdict: /);
  return lines;
}

describe('colony doctor', () => {
  it('prints a line per check, the fix under each failure and the verdict, and exits 1 when one failed', async () => {
    const result = await runCli(['doctor', '--repo', plain, '--sandbox', 'none']);
    expect(result.code).toBe(1);
    const lines = linesOf(result.stdout);
    expect(lines.map((line) => /^\w+ {2}(.+?): /.exec(line)?.[1]).filter((name) => name !== undefined)).toEqual(
      expect.arrayContaining(['node', 'git', 'repository', 'state directory', 'disk', 'sandbox', 'overlay workspaces', 'model sim (workers, planners)']),
    );
    const failed = lines.findIndex((line) => line.startsWith('fail  repository: '));
    expect(lines[failed]).toBe(`fail  repository: ${plain} is not inside a git repository`);
    expect(lines[failed + 1]).toBe('      fix: Run `git init` there and make a first commit, or pass the path of an existing repository with --repo');
    expect(lines.filter((line) => line.startsWith('fail  '))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/^verdict: colony cannot run here yet: 1 of \d+ checks failed \(repository\); fix them and run colony doctor again\.$/);
  });

  it('gives the same checks and verdict as JSON with --json', async () => {
    const result = await runCli(['doctor', '--repo', plain, '--sandbox', 'none', '--json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { ok: boolean; verdict: string; checks: { name: string; status: string; fix?: string }[] };
    expect(report.ok).toBe(false);
    expect(report.verdict).toMatch(/^colony cannot run here yet: 1 of \d+ checks failed \(repository\)/);
    expect(report.checks.find((check) => check.name === 'repository')).toMatchObject({ status: 'fail', fix: expect.stringContaining('git init') });
    expect(report.checks.find((check) => check.name === 'model sim (workers, planners)')).toMatchObject({ status: 'pass', tokens: { input: 0, output: 0 } });
  });

  it('refuses a sandbox it does not know with exit 2, naming the ones it takes', async () => {
    const result = await runCli(['doctor', '--repo', plain, '--sandbox', 'docker']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("argument 'docker' is invalid. Allowed choices are bubblewrap, unshare, none.");
  });

  it('checks the planners\' model apart from the workers\', and never prints a refused key', async () => {
    const result = await runCli(
      ['doctor', '--repo', repo.dir, '--sandbox', 'none', '--model', 'openai:gpt-5.2', '--planner-model', 'sim', '--base-url', refusingUrl, '--api-key-env', 'DOCTOR_KEY'],
      { env: { DOCTOR_KEY: KEY, PATH: process.env.PATH } },
    );
    expect(result.code).toBe(1);
    const lines = linesOf(result.stdout);
    expect(lines).toContain('pass  model sim (planners): the simulated model runs inside colony: no provider, no key, no request');
    const refused = lines.findIndex((line) => line.startsWith('fail  model openai:gpt-5.2 (workers): '));
    expect(lines[refused]).toContain(`${refusingUrl} with the key in DOCTOR_KEY: The provider refused the API key (HTTP 401`);
    expect(lines[refused + 1]).toBe('      fix: put a valid key for this provider in DOCTOR_KEY, or name the variable that holds one with --api-key-env NAME');
    expect(result.stdout + result.stderr).not.toContain(KEY);
  });
});

describe('colony doctor with a configuration', () => {
  it("checks the models colony run would use: colony.toml's, under a COLONY_* variable, under a flag", async () => {
    const configured = createExampleRepository();
    try {
      writeFileSync(join(configured.dir, 'colony.toml'), 'model = "sim?seed=3"\nplanner-model = "sim?seed=4"\n\n[sandbox]\nmethod = "none"\n');
      const names = async (args: readonly string[], env: Record<string, string | undefined> = {}) => {
        const result = await runCli(['doctor', '--repo', configured.dir, '--json', ...args], { env: { PATH: process.env.PATH, ...env } });
        const report = JSON.parse(result.stdout) as { checks: { name: string }[] };
        return report.checks.map((check) => check.name);
      };
      expect(await names([])).toEqual(expect.arrayContaining(['model sim?seed=3 (workers)', 'model sim?seed=4 (planners)']));
      expect(await names([], { COLONY_PLANNER_MODEL: 'sim?seed=5' })).toContain('model sim?seed=5 (planners)');
      expect(await names(['--planner-model', 'sim?seed=6'], { COLONY_PLANNER_MODEL: 'sim?seed=5' })).toContain('model sim?seed=6 (planners)');
    } finally {
      configured.cleanup();
    }
  });

  it('refuses a configuration file with a typo, as colony run does', async () => {
    const configured = createExampleRepository();
    try {
      writeFileSync(join(configured.dir, 'colony.toml'), 'modle = "sim"\n');
      const result = await runCli(['doctor', '--repo', configured.dir], { env: { PATH: process.env.PATH } });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('colony.toml');
      expect(result.stderr).toContain('modle');
    } finally {
      configured.cleanup();
    }
  });
});

describeRuns('colony doctor on a machine that runs colony', () => {
  it('passes a fresh repository with the default sandbox and the sim, and exits 0', async () => {
    const result = await runCli(['doctor', '--repo', repo.dir], { env: { PATH: process.env.PATH } });
    const lines = linesOf(result.stdout, result.stderr);
    expect(lines.filter((line) => line.startsWith('fail  '))).toEqual([]);
    expect(result.code).toBe(0);
    for (const name of ['sandbox programs', 'agent uids', 'cgroups', 'sandbox']) expect(lines.some((line) => new RegExp(`^(pass|warn) {2}${name}: `).test(line))).toBe(true);
    expect(lines.at(-1)).toMatch(/^verdict: colony can run here \(\d+ checks, none failed/);
  });
});
