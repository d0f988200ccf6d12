import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { readLoggedEvents } from '../testing/colony-process.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { keepModules } from '../testing/small-goal.js';
import { dependOn, ofType } from '../testing/registry-project.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

const TIMEOUT_MS = 240_000;

/** A name the npm registry answers 404 for. */
const MISSING_PACKAGE = 'colony-test-no-such-package-7f3d2a';

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
});

afterEach(() => {
  repo.cleanup();
});

describeRuns('the project setup of a run', { timeout: TIMEOUT_MS }, () => {
  it('stops before any agent when the install cannot succeed, with the registry’s answer; fixed, the run installs the dependency for every check and ends done', async () => {
    const check = `node -e "require('is-number')"`;
    dependOn(repo, { [MISSING_PACKAGE]: '^1.0.0' }, check);
    const failed = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '2']);
    expect(failed.code, failed.stderr).toBe(1);
    // npm's own words: the registry has no such package.
    expect(failed.stderr).toMatch(/the setup failed before any agent started: npm could not install/);
    expect(failed.stderr).toMatch(new RegExp(`404[^\\n]*${MISSING_PACKAGE}`));
    expect(failed.stderr).toMatch(/To fix it: fix package\.json/);
    // What it tried is said while it runs, and where from.
    expect(failed.stderr).toMatch(/setting up: npm install --ignore-scripts [^\n]* from https:\/\/registry\.npmjs\.org\/ \(1 package\)/);
    const first = readLoggedEvents(defaultStateDir(repo.dir));
    expect(ofType(first, 'dependencies.failed')).toHaveLength(1);
    expect(ofType(first, 'agent.started')).toEqual([]);
    expect(ofType(first, 'run.ended').map((event) => event.data.status)).toEqual(['failed']);
    // Nothing of the run stays in the repository: no branch, no lockfile.
    expect(repo.git('branch', '--list', 'colony/*')).toBe('');
    expect(repo.git('status', '--porcelain')).toBe('');

    // Fixed on main: the next run starts afresh, installs once and every check imports the package.
    const manifest = JSON.parse(readFileSync(join(repo.dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(repo.dir, 'package.json'), `${JSON.stringify({ ...manifest, dependencies: { 'is-number': '7.0.0' } }, null, 2)}\n`);
    repo.git('commit', '-qam', 'depend on a package that exists');
    const fixed = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '2', '--json']);
    expect(fixed.code, fixed.stderr).toBe(0);
    const outcome = JSON.parse(fixed.stdout) as { status: string; main: string };
    expect(outcome).toMatchObject({ status: 'done', check: { passed: true } });
    const events = readLoggedEvents(defaultStateDir(repo.dir)).filter((event) => event.runId !== first[0]?.runId);
    expect(ofType(events, 'dependencies.installing').filter((event) => event.data.elapsedMs === 0)).toHaveLength(1);
    expect(ofType(events, 'dependencies.prepared')).toMatchObject([{ data: { reused: false } }]);
    // The workers' own checks and the one on the trunk at the end each imported it.
    expect(ofType(events, 'dependencies.linked').length).toBeGreaterThanOrEqual(2);
    // The install reached the registry, and nothing else, through the setup's proxy, which recorded each request.
    expect(ofType(events, 'sandbox.opened')).toMatchObject([{ data: { network: 'none', setupNetwork: 'only registry.npmjs.org' } }]);
    const requests = ofType(events, 'network.requested').map((event) => event.data);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((request) => request.setup === true && request.allowed && request.host === 'registry.npmjs.org')).toBe(true);
    // The lockfile npm resolved stays in colony's layer, never in the user's tree or on the trunk.
    expect(repo.git('ls-tree', '-r', '--name-only', outcome.main).split('\n')).not.toContain('package-lock.json');
    expect(existsSync(join(repo.dir, 'package-lock.json'))).toBe(false);
    expect(existsSync(join(repo.dir, 'node_modules'))).toBe(false);
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it("runs a project's own setup from colony.toml once per hash of its inputs, for the workers, the trunk's check and colony green --now", async () => {
    // A Python environment made with Debian's python3 and the standard library alone; the check runs inside it.
    writeFileSync(join(repo.dir, 'pyproject.toml'), '[project]\nname = "toolbox"\nversion = "1.0.0"\n');
    writeFileSync(join(repo.dir, 'colony.toml'), 'setup = "python3 -m venv --without-pip .venv"\nsetup-inputs = ["pyproject.toml"]\n');
    writeFileSync(join(repo.dir, '.gitignore'), '.venv/\n');
    repo.git('add', '-A');
    repo.git('commit', '-qm', 'a Python environment');
    keepModules(repo, ['src/numbers/clamp.js'], `.venv/bin/python -c "import sys; sys.exit(0 if sys.prefix != sys.base_prefix else 'not in the venv')"`.concat(' && node scripts/test.js'));
    const run = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '2', '--trunk', 'main', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'done', check: { passed: true } });
    const stateDir = defaultStateDir(repo.dir);
    const ran = readLoggedEvents(stateDir);
    expect(ofType(ran, 'dependencies.installing').filter((event) => event.data.elapsedMs === 0).map((event) => event.data)).toEqual([{ command: 'python3 -m venv --without-pip .venv', registry: null, packages: null, elapsedMs: 0 }]);
    const [made] = ofType(ran, 'dependencies.prepared');
    expect(made?.data).toMatchObject({ reused: false, command: 'python3 -m venv --without-pip .venv' });
    expect(existsSync(join(repo.dir, '.venv'))).toBe(false);

    // The same inputs: green --now checks main with the same environment, made no second time.
    const same = await runCli(['green', '--now', '--repo', repo.dir, '--json']);
    expect(same.code, same.stderr).toBe(0);
    expect(JSON.parse(same.stdout)).toMatchObject({ passed: true });
    const reused = ofType(readLoggedEvents(stateDir), 'dependencies.prepared').slice(1);
    expect(reused.map((event) => ({ key: event.data.key, reused: event.data.reused }))).toEqual([{ key: made?.data.key, reused: true }]);

    // A changed input: a new environment, made once.
    writeFileSync(join(repo.dir, 'pyproject.toml'), '[project]\nname = "toolbox"\nversion = "1.1.0"\n');
    repo.git('commit', '-qam', 'a new version');
    const changed = await runCli(['green', '--now', '--repo', repo.dir, '--json']);
    expect(changed.code, changed.stderr).toBe(0);
    const after = readLoggedEvents(stateDir);
    const last = ofType(after, 'dependencies.prepared').at(-1);
    expect(last?.data.reused).toBe(false);
    expect(last?.data.key).not.toBe(made?.data.key);
    expect(ofType(after, 'dependencies.installing').filter((event) => event.data.elapsedMs === 0)).toHaveLength(2);
  });
});
