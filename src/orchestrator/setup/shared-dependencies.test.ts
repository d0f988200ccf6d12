import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventBody } from '../../events/event-types.js';
import { runInstallCommand, type InstallRequest, type RunInstall } from '../../workspace/dependencies/npm-install.js';
import { createNodeProject, type NodeProject } from '../../workspace/testing/node-project.js';
import { prepareSharedDependencies } from './shared-dependencies.js';

const TIMEOUT_MS = 120_000;

let project: NodeProject;

beforeEach(async () => {
  project = await createNodeProject();
}, TIMEOUT_MS);

afterEach(async () => {
  await project.remove();
});

/** The real npm, counting its runs; `failing` makes the next runs fail as npm would, with its output. */
function countingInstall(): { readonly runInstall: RunInstall; readonly requests: InstallRequest[]; failing: boolean } {
  const install = {
    requests: [] as InstallRequest[],
    failing: false,
    runInstall: (request: InstallRequest) => {
      install.requests.push(request);
      if (install.failing) return Promise.resolve({ ok: false as const, error: 'npm ci failed (exit 1): npm error 404 Not Found' });
      return runInstallCommand(request);
    },
  };
  return install;
}

async function prepare(install: RunInstall, events: EventBody[]) {
  const prepared = await prepareSharedDependencies({
    repo: project.repo,
    commit: project.commit,
    stateDir: dirname(project.cacheDir),
    enabled: true,
    setup: null,
    record: (body) => events.push(body),
    runInstall: install,
  });
  if (!prepared.ok) throw new Error(prepared.error);
  return prepared;
}

describe('the layers of the commits main moves to', { timeout: TIMEOUT_MS }, () => {
  it('gives each commit the layer of its package.json and lockfile: one install per new set, none for a commit that changed other files', async () => {
    const install = countingInstall();
    const events: EventBody[] = [];
    const { layerDir, layers } = await prepare(install.runInstall, events);
    expect(install.requests).toHaveLength(1);
    expect(await layers.forCommit(project.commit)).toBe(layerDir);

    await project.temporary.write('README.md', '# a node project, documented\n');
    const documented = await project.temporary.commitAll('Document it');
    expect(await layers.forCommit(documented)).toBe(layerDir);
    expect(install.requests).toHaveLength(1);

    const upgraded = await project.dependOnVersion('2.0.0', 'x 2.0.0');
    const [first, second] = await Promise.all([layers.forCommit(upgraded), layers.forCommit(upgraded)]);
    expect(first).toBe(second);
    expect(first).not.toBe(layerDir);
    expect(install.requests).toHaveLength(2);
    expect(await readFile(join(first ?? '', 'node_modules/x/index.js'), 'utf8')).toContain('x 2.0.0');
    // The earlier commit keeps its own layer.
    expect(await readFile(join(layerDir ?? '', 'node_modules/x/index.js'), 'utf8')).toContain('x 1.0.0');
    const prepared = events.filter((event) => event.type === 'dependencies.prepared');
    expect(prepared.map((event) => event.data.commit)).toEqual([project.commit, upgraded]);
    expect(events.filter((event) => event.type === 'dependencies.installing')).toHaveLength(2);
  });

  it('keeps the newest layer that installed for a commit whose install fails, and records why', async () => {
    const install = countingInstall();
    const events: EventBody[] = [];
    const { layerDir, layers } = await prepare(install.runInstall, events);
    install.failing = true;
    const upgraded = await project.dependOnVersion('2.0.0', 'x 2.0.0');
    expect(await layers.forCommit(upgraded)).toBe(layerDir);
    expect(await layers.forCommit(upgraded)).toBe(layerDir);
    expect(install.requests).toHaveLength(2);
    const skipped = events.filter((event) => event.type === 'dependencies.skipped');
    expect(skipped).toEqual([
      { type: 'dependencies.skipped', data: { reason: expect.stringMatching(new RegExp(`^the install for ${upgraded.slice(0, 12)} failed, so its checkouts get the layer of an earlier commit: .*404 Not Found`)) } },
    ]);
  });
});
