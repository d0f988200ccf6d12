import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { readLoggedEvents } from '../testing/colony-process.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { keepModules } from '../testing/small-goal.js';
import { ofType } from '../testing/registry-project.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';
import { parseScenario } from '../../src/sim/scenario/scenario.js';

const TIMEOUT_MS = 300_000;

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
});

afterEach(() => {
  repo.cleanup();
});

/** Gives the goal's modules the npm packages they import, committed on main. */
function usePackages(packages: Record<string, Record<string, string>>): void {
  const goal = readFileSync(join(repo.dir, 'GOAL.md'), 'utf8');
  const parsed = parseScenario(goal);
  if (!parsed.ok) throw new Error(parsed.error);
  const modules = parsed.scenario.modules.map((module) => ({ ...module, ...(packages[module.path] === undefined ? {} : { packages: packages[module.path] }) }));
  const spec = JSON.stringify({ project: parsed.scenario.project, modules }, null, 2);
  writeFileSync(join(repo.dir, 'GOAL.md'), goal.replace(/```colony-spec\n[\s\S]*?\n```/, `\`\`\`colony-spec\n${spec}\n\`\`\``));
  repo.git('commit', '-qam', 'modules that import packages');
}

/** The project depends on is-number with its lockfile committed and node_modules ignored, as most do. */
function withLockfile(): void {
  const manifest = JSON.parse(readFileSync(join(repo.dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(repo.dir, 'package.json'), `${JSON.stringify({ ...manifest, dependencies: { 'is-number': '7.0.0' } }, null, 2)}\n`);
  writeFileSync(join(repo.dir, '.gitignore'), 'node_modules/\n');
  execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: repo.dir, stdio: 'pipe' });
  repo.git('add', '-A');
  repo.git('commit', '-qm', 'depend on is-number');
}

describeRuns('dependencies workers add during a run', { timeout: TIMEOUT_MS }, () => {
  it('lands two packages added at once by two workers in one lockfile colony settles, and later workspaces and checks get a layer with them', async () => {
    withLockfile();
    keepModules(repo, ['src/strings/truncate.js', 'src/strings/case.js', 'src/numbers/clamp.js']);
    usePackages({ 'src/strings/truncate.js': { 'is-odd': '3.0.1' }, 'src/strings/case.js': { 'kind-of': '6.0.3' } });
    const run = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '2', '--network', 'registries', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const outcome = JSON.parse(run.stdout) as { status: string; main: string };
    expect(outcome).toMatchObject({ status: 'done', check: { passed: true } });
    const events = readLoggedEvents(defaultStateDir(repo.dir));

    // Both packages are on main, in package.json and in one lockfile npm wrote.
    const manifest = JSON.parse(repo.git('show', `${outcome.main}:package.json`)) as { dependencies: Record<string, string> };
    expect(manifest.dependencies).toEqual({ 'is-number': '7.0.0', 'is-odd': '3.0.1', 'kind-of': '6.0.3' });
    const lockfile = JSON.parse(repo.git('show', `${outcome.main}:package-lock.json`)) as { packages: Record<string, { version?: string }> };
    expect(lockfile.packages['node_modules/is-odd']?.version).toBe('3.0.1');
    expect(lockfile.packages['node_modules/kind-of']?.version).toBe('6.0.3');
    expect(lockfile.packages['']).toMatchObject({ dependencies: manifest.dependencies });

    // The two workers started from the same main; the second to land had its manifests settled by colony, not by its agent.
    const settled = ofType(events, 'merge.landed').filter((event) => event.data.autoResolved?.includes('package-lock.json') === true);
    expect(settled).toHaveLength(1);
    expect(settled[0]?.data.autoResolved).toContain('package.json');
    // The worker whose merge it was is told, and not sent to an npm it has no network for.
    const told = ofType(events, 'tool.ended').filter((event) => event.data.name === 'merge_to_main' && event.data.output.includes('colony merged your package.json'));
    expect(told.map((event) => /key by key, and had npm write the lockfile again for both \(package-lock\.json, package\.json\); your commands get the dependencies they name/.test(event.data.output))).toEqual([true]);
    expect(ofType(events, 'merge.conflicted').filter((event) => event.data.files.some((file) => file.startsWith('package')))).toEqual([]);

    // Main's new manifests got their own layer, which the later workspaces and the trunk's check were given.
    const prepared = ofType(events, 'dependencies.prepared');
    expect(new Set(prepared.map((event) => event.data.key)).size).toBeGreaterThanOrEqual(2);
    expect(ofType(events, 'main.checked')).toMatchObject([{ data: { passed: true } }]);
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('sets up again the workspace of a worker that cannot reach the registry and declares its package in package.json instead', async () => {
    // No lockfile: npm resolves package.json's versions, as for many small packages.
    const manifest = JSON.parse(readFileSync(join(repo.dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(repo.dir, 'package.json'), `${JSON.stringify({ ...manifest, dependencies: { 'is-number': '7.0.0' } }, null, 2)}\n`);
    writeFileSync(join(repo.dir, '.gitignore'), 'node_modules/\n');
    repo.git('add', '-A');
    repo.git('commit', '-qm', 'depend on is-number');
    keepModules(repo, ['src/strings/truncate.js']);
    usePackages({ 'src/strings/truncate.js': { 'is-odd': '3.0.1' } });
    const run = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '1', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const outcome = JSON.parse(run.stdout) as { status: string; main: string };
    expect(outcome).toMatchObject({ status: 'done', check: { passed: true } });
    const events = readLoggedEvents(defaultStateDir(repo.dir));

    // The worker's own npm install had no network; its npm pkg set did not need any.
    const commands = ofType(events, 'tool.started').flatMap((event) => (event.data.name === 'run_command' ? [(JSON.parse(event.data.input) as { command: string }).command] : []));
    expect(commands).toContain("npm pkg set 'dependencies[is-odd]=3.0.1'");
    expect(ofType(events, 'network.requested').filter((event) => event.data.setup !== true && event.data.allowed)).toEqual([]);
    // colony installed what the workspace's package.json named, through the setup's proxy, and put it in the workspace.
    expect(ofType(events, 'dependencies.linked').filter((event) => event.data.changed !== undefined)).toMatchObject([{ data: { changed: ['package.json'] } }]);
    expect(ofType(events, 'network.requested').some((event) => event.data.setup === true && event.data.allowed)).toBe(true);
    // Main got the declaration, and the layer its check ran with was the one made for the workspace: one install each.
    const landed = JSON.parse(repo.git('show', `${outcome.main}:package.json`)) as { dependencies: Record<string, string> };
    expect(landed.dependencies).toEqual({ 'is-number': '7.0.0', 'is-odd': '3.0.1' });
    expect(ofType(events, 'dependencies.prepared').map((event) => event.data.reused)).toEqual([false, false]);
    expect(ofType(events, 'main.checked')).toMatchObject([{ data: { passed: true } }]);
  });
});
