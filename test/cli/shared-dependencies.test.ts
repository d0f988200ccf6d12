import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { recordDirOf } from '../../src/workspace/dependencies/dependency-layer-records.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

const TIMEOUT_MS = 180_000;

let repo: ExampleRepository;

/**
 * A bundled example made into a Node project with one dependency, `x`, installed from a
 * tarball committed under deps/ (so npm needs no network), node_modules ignored.
 */
function createNodeExample(example: string): ExampleRepository {
  const repo = createExampleRepository(example);
  const source = join(repo.dir, '..', 'x-source');
  mkdirSync(source);
  writeFileSync(join(source, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0', main: 'index.js' }));
  writeFileSync(join(source, 'index.js'), 'module.exports = "x 1.0.0";\n');
  mkdirSync(join(repo.dir, 'deps'));
  const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, stdio: 'pipe', env: { ...process.env, npm_config_update_notifier: 'false' } });
  npm(['pack', '--silent', '--pack-destination', join(repo.dir, 'deps')], source);
  npm(['install', '--ignore-scripts', '--no-audit', '--no-fund', './deps/x-1.0.0.tgz'], repo.dir);
  rmSync(join(repo.dir, 'node_modules'), { recursive: true });
  writeFileSync(join(repo.dir, '.gitignore'), 'node_modules/\n');
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'Depend on x');
  return repo;
}

afterEach(() => {
  repo.cleanup();
});

async function eventsOf(dir: string): Promise<ColonyEvent[]> {
  const result = await runCli(['events', '--repo', dir, '--json']);
  return result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as ColonyEvent);
}

function ofType<T extends ColonyEvent['type']>(events: readonly ColonyEvent[], type: T): Extract<ColonyEvent, { type: T }>[] {
  return events.filter((event): event is Extract<ColonyEvent, { type: T }> => event.type === type);
}

describeRuns('shared dependency installs in colony work', { timeout: TIMEOUT_MS }, () => {
  beforeEach(() => {
    repo = createNodeExample('text-kit');
  });

  it('installs once, links the install into a worktree workspace, and reuses it in the next run', async () => {
    const first = await runCli(['work', join(repo.dir, 'tasks', '01-pad.md'), '--repo', repo.dir, '--model', 'sim?seed=3', '--workspaces', 'worktree', '--json']);
    expect(first.code).toBe(0);
    let events = await eventsOf(repo.dir);
    const prepared = ofType(events, 'dependencies.prepared');
    expect(prepared).toHaveLength(1);
    expect(prepared[0]?.data.reused).toBe(false);
    const created = ofType(events, 'workspace.created').filter((event) => event.agentId.startsWith('worker'));
    const linked = ofType(events, 'dependencies.linked');
    expect(linked.map((event) => event.data.path)).toEqual(created.map((event) => event.data.path));
    expect(linked[0]?.agentId).toMatch(/^worker/);

    const second = await runCli(['work', join(repo.dir, 'tasks', '02-case.md'), '--repo', repo.dir, '--model', 'sim?seed=3', '--workspaces', 'worktree', '--json']);
    expect(second.code).toBe(0);
    events = await eventsOf(repo.dir);
    const reused = ofType(events, 'dependencies.prepared');
    expect(reused.map((event) => event.data.reused)).toEqual([false, true]);
    expect(reused[1]?.data.key).toBe(reused[0]?.data.key);
    expect(repo.git('ls-tree', '-r', '--name-only', 'main')).not.toContain('node_modules');
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('stacks the install under an overlay workspace instead of linking it, and never commits it', async () => {
    const result = await runCli(['work', join(repo.dir, 'tasks', '01-pad.md'), '--repo', repo.dir, '--model', 'sim?seed=3', '--workspaces', 'overlay', '--json']);
    expect(result.code).toBe(0);
    const events = await eventsOf(repo.dir);
    const prepared = ofType(events, 'dependencies.prepared');
    expect(prepared).toHaveLength(1);
    expect(ofType(events, 'dependencies.linked')).toEqual([]);
    const created = ofType(events, 'workspace.created').filter((event) => event.agentId.startsWith('worker'));
    expect(created.map((event) => event.data.method)).toEqual(['overlay']);
    // The layer records the workspace that stood on it, so no collection deletes it from under one.
    const users = readdirSync(join(recordDirOf(prepared[0]?.data.layerDir ?? ''), 'users')).map((name) =>
      readFileSync(join(recordDirOf(prepared[0]?.data.layerDir ?? ''), 'users', name), 'utf8'),
    );
    expect(users).toEqual(created.map((event) => event.data.path));
    expect(repo.git('ls-tree', '-r', '--name-only', 'main')).not.toContain('node_modules');
  });

  it('does without the shared install with --no-shared-deps', async () => {
    const result = await runCli(['work', join(repo.dir, 'tasks', '01-pad.md'), '--repo', repo.dir, '--model', 'sim?seed=3', '--no-shared-deps', '--json']);
    expect(result.code).toBe(0);
    const events = await eventsOf(repo.dir);
    expect(ofType(events, 'dependencies.skipped').map((event) => event.data.reason)).toEqual([expect.stringMatching(/--no-shared-deps/)]);
    expect(ofType(events, 'dependencies.prepared')).toEqual([]);
    expect(ofType(events, 'dependencies.linked')).toEqual([]);
  });
});

describeRuns('shared dependency installs in colony run', { timeout: 300_000 }, () => {
  it('prepares the install once for the run and links it into every worker’s worktree workspace', async () => {
    repo = createNodeExample('toolbox');
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim', '--workers', '4', '--workspaces', 'worktree', '--json']);
    expect(result.code).toBe(0);
    const events = await eventsOf(repo.dir);
    const prepared = ofType(events, 'dependencies.prepared');
    expect(prepared.map((event) => [event.agentId, event.data.reused])).toEqual([['system', false]]);
    const workerWorkspaces = ofType(events, 'workspace.created').filter((event) => event.agentId.startsWith('worker'));
    expect(workerWorkspaces.length).toBeGreaterThan(1);
    const linked = ofType(events, 'dependencies.linked').map((event) => event.data.path);
    const workspacesDir = `${join(defaultStateDir(repo.dir), 'workspaces')}/`;
    const inWorkspaces = linked.filter((path) => path.startsWith(workspacesDir));
    expect(inWorkspaces.sort()).toEqual(workerWorkspaces.map((event) => event.data.path).sort());
    // The rest are views of main, where checks ran: acceptance checks', green snapshots' and the
    // planners' own; the project's tests need the install in each.
    const views = `${join(defaultStateDir(repo.dir), 'views')}/`;
    const elsewhere = linked.filter((path) => !path.startsWith(workspacesDir));
    expect(elsewhere.every((path) => /^(accept|green|planner)-/.test(path.slice(views.length)) && path.startsWith(views))).toBe(true);
    const root = ofType(events, 'agent.started').find((event) => event.data.role === 'root-planner');
    expect(elsewhere).toContain(`${views}${root?.agentId ?? ''}`);
    expect(repo.git('ls-tree', '-r', '--name-only', 'main')).not.toContain('node_modules');
  });
});
