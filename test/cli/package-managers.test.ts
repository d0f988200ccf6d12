import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { readLoggedEvents } from '../testing/colony-process.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { keepModules } from '../testing/small-goal.js';
import { dependOn, ofType } from '../testing/registry-project.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

const TIMEOUT_MS = 240_000;

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
});

afterEach(() => {
  repo.cleanup();
});

/** What each install recorded as it started (later `dependencies.installing` events say it still runs). */
function startsOf(events: readonly ColonyEvent[]) {
  return ofType(events, 'dependencies.installing').flatMap((event) => (event.data.elapsedMs === 0 ? [event.data] : []));
}

/** Runs the goal to done and returns the events of the run. */
async function runToDone(): Promise<ColonyEvent[]> {
  const run = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '2']);
  expect(run.code, run.stderr).toBe(0);
  const events = readLoggedEvents(defaultStateDir(repo.dir));
  expect(ofType(events, 'run.ended').map((event) => event.data.status)).toEqual(['done']);
  expect(ofType(events, 'main.checked')).toMatchObject([{ data: { passed: true } }]);
  expect(ofType(events, 'dependencies.prepared')).toMatchObject([{ data: { reused: false } }]);
  expect(existsSync(join(repo.dir, 'node_modules'))).toBe(false);
  expect(repo.git('status', '--porcelain')).toBe('');
  return events;
}

/** A workspace package, @demo/util, whose index is true where its dependency is-number is installed. */
function addUtilPackage(): void {
  mkdirSync(join(repo.dir, 'packages', 'util'), { recursive: true });
  writeFileSync(join(repo.dir, 'packages', 'util', 'package.json'), JSON.stringify({ name: '@demo/util', version: '1.0.0', main: 'index.js', dependencies: { 'is-number': '7.0.0' } }));
  writeFileSync(join(repo.dir, 'packages', 'util', 'index.js'), "module.exports = require('is-number')(5);\n");
}

/** yarn 4 pinned in package.json (with `fields` added), its files ignored, and the lockfile it writes, made as the project's author would. */
function lockWithYarn4(fields: Record<string, unknown> = {}): void {
  const manifest = JSON.parse(readFileSync(join(repo.dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(repo.dir, 'package.json'), `${JSON.stringify({ ...manifest, packageManager: 'yarn@4.18.1', ...fields }, null, 2)}\n`);
  writeFileSync(join(repo.dir, '.gitignore'), 'node_modules/\n.pnp.*\n.yarn/\n');
  execFileSync('npm', ['exec', '--yes', '--package=@yarnpkg/cli-dist@4.18.1', '--', 'yarn', 'install', '--mode=update-lockfile'], {
    cwd: repo.dir,
    stdio: 'pipe',
    env: { ...process.env, YARN_ENABLE_TELEMETRY: '0', YARN_ENABLE_GLOBAL_CACHE: 'true' },
  });
  repo.git('add', '-A');
  repo.git('commit', '-qm', 'yarn 4');
}

describeRuns('projects installed by pnpm, yarn and npm workspaces', { timeout: TIMEOUT_MS }, () => {
  it('installs a pnpm project with the pnpm that reads its lockfile’s format (a pnpm 9 lockfile by pnpm 10), pnpm itself included, for every check, leaving nothing in the user’s tree', async () => {
    // The project's scripts call pnpm: the layer brings it, on the agents' PATH.
    dependOn(repo, { 'is-number': '7.0.0' }, `pnpm exec node -e "require('is-number')"`);
    // The project's lockfile, made as its author would.
    execFileSync('npm', ['exec', '--yes', '--package=pnpm@9', '--', 'pnpm', 'install', '--lockfile-only'], { cwd: repo.dir, stdio: 'pipe' });
    repo.git('add', 'pnpm-lock.yaml');
    repo.git('commit', '-qm', 'a pnpm lockfile');
    const events = await runToDone();
    expect(startsOf(events)).toEqual([
      { command: 'pnpm@10 install --frozen-lockfile --ignore-scripts --store-dir .pnpm-store', registry: 'https://registry.npmjs.org/', packages: 1, elapsedMs: 0 },
    ]);
    expect(existsSync(join(repo.dir, '.pnpm-store'))).toBe(false);
  });

  it('installs an npm workspaces monorepo once, its packages linked from the shared node_modules, for every check', async () => {
    const manifest = JSON.parse(readFileSync(join(repo.dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(repo.dir, 'package.json'), `${JSON.stringify({ ...manifest, workspaces: ['packages/*'] }, null, 2)}\n`);
    addUtilPackage();
    writeFileSync(join(repo.dir, '.gitignore'), 'node_modules/\n');
    execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: repo.dir, stdio: 'pipe' });
    repo.git('add', '-A');
    repo.git('commit', '-qm', 'a workspace package');
    keepModules(repo, ['src/numbers/clamp.js'], `node -e "if (require('@demo/util') !== true) process.exit(1)" && node scripts/test.js`);
    const events = await runToDone();
    expect(startsOf(events).map((start) => start.command)).toEqual(['npm ci --ignore-scripts --no-audit --no-fund']);
  });

  it("installs a pnpm workspace once, each package's own node_modules in the layer at its place, for every check", async () => {
    // util's dependency is in packages/util/node_modules only (pnpm hoists nothing), and the root reaches util through its workspace link.
    dependOn(repo, { '@demo/util': 'workspace:*' }, `node -e "if (require('@demo/util') !== true) process.exit(1)"`);
    writeFileSync(join(repo.dir, 'pnpm-workspace.yaml'), 'packages:\n  - "packages/*"\n');
    addUtilPackage();
    execFileSync('npm', ['exec', '--yes', '--package=pnpm@9', '--', 'pnpm', 'install', '--lockfile-only'], { cwd: repo.dir, stdio: 'pipe' });
    repo.git('add', '-A');
    repo.git('commit', '-qm', 'a pnpm workspace');
    const events = await runToDone();
    expect(startsOf(events).map((start) => start.command)).toEqual(['pnpm@10 install --frozen-lockfile --ignore-scripts --store-dir .pnpm-store']);
    const [prepared] = ofType(events, 'dependencies.prepared');
    expect(readdirSync(join(prepared?.data.layerDir ?? '', 'packages', 'util', 'node_modules'))).toContain('is-number');
    expect(readdirSync(join(prepared?.data.layerDir ?? '', 'node_modules'))).not.toContain('is-number');
  });

  it('installs a yarn 1 project with yarn 1 from the npm registry, yarn itself included, for every check', async () => {
    dependOn(repo, { 'is-number': '7.0.0' }, `yarn --version >/dev/null && node -e "require('is-number')"`);
    // The project's lockfile, made as its author would; the install it made is not committed.
    execFileSync('npm', ['exec', '--yes', '--package=yarn@1', '--', 'yarn', 'install', '--ignore-scripts', '--non-interactive', '--no-progress'], { cwd: repo.dir, stdio: 'pipe' });
    rmSync(join(repo.dir, 'node_modules'), { recursive: true, force: true });
    repo.git('add', 'yarn.lock');
    repo.git('commit', '-qm', 'a yarn lockfile');
    const events = await runToDone();
    expect(startsOf(events)).toEqual([
      { command: 'yarn@1 install --frozen-lockfile --ignore-scripts --non-interactive --no-progress --cache-folder .yarn-cache', registry: 'https://registry.yarnpkg.com/', packages: 1, elapsedMs: 0 },
    ]);
  });

  it("installs a yarn 4 Plug'n'Play project with the yarn package.json pins, .pnp.cjs and the archives it names shared, for every check", async () => {
    // The check runs through yarn, which resolves the package by Plug'n'Play: there is no node_modules/is-number.
    dependOn(repo, { 'is-number': '7.0.0' }, `yarn node -e "require('is-number')"`);
    lockWithYarn4();
    const events = await runToDone();
    expect(startsOf(events)).toEqual([
      { command: 'yarn@4.18.1 install --immutable --mode=skip-build', registry: 'https://registry.yarnpkg.com/', packages: 1, elapsedMs: 0 },
    ]);
    const [prepared] = ofType(events, 'dependencies.prepared');
    expect(readdirSync(prepared?.data.layerDir ?? '').sort()).toEqual(['.pnp.cjs', '.pnp.loader.mjs', 'node_modules']);
    expect(readdirSync(join(prepared?.data.layerDir ?? '', 'node_modules'))).not.toContain('is-number');
    expect(existsSync(join(repo.dir, '.pnp.cjs'))).toBe(false);
  });

  it("installs a yarn 4 Plug'n'Play workspace, its packages' manifests among the inputs, for every check", async () => {
    dependOn(repo, { '@demo/util': 'workspace:*' }, `yarn node -e "if (require('@demo/util') !== true) process.exit(1)"`);
    addUtilPackage();
    lockWithYarn4({ workspaces: ['packages/*'] });
    const events = await runToDone();
    expect(startsOf(events).map((start) => start.command)).toEqual(['yarn@4.18.1 install --immutable --mode=skip-build']);
  });
});
