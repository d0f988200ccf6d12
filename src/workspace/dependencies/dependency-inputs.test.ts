import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepository, type Repository } from '../git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../testing/temporary-repository.js';
import { readDependencyInputs } from './dependency-inputs.js';

const ROOT = { name: 'mono', version: '1.0.0', workspaces: ['packages/*'] };
const UTIL = { name: '@demo/util', version: '1.0.0', dependencies: { 'is-number': '7.0.0' } };

/** An npm lockfile (version 3) of the monorepo, with `extra` entries added to its packages. */
function lockfile(extra: Record<string, unknown> = {}): string {
  const packages = {
    '': ROOT,
    'node_modules/@demo/util': { resolved: 'packages/util', link: true },
    'node_modules/is-number': { version: '7.0.0', resolved: 'https://registry.npmjs.org/is-number/-/is-number-7.0.0.tgz' },
    'packages/util': UTIL,
    ...extra,
  };
  return JSON.stringify({ name: 'mono', version: '1.0.0', lockfileVersion: 3, requires: true, packages });
}

let temporary: TemporaryRepository;
let repo: Repository;

beforeAll(async () => {
  temporary = await createTemporaryRepository({ 'package.json': JSON.stringify(ROOT), 'packages/util/package.json': JSON.stringify(UTIL), 'package-lock.json': lockfile() });
  const opened = await openRepository(temporary.root);
  if (!opened.ok) throw new Error(opened.error);
  repo = opened.repo;
});

afterAll(async () => {
  await temporary.remove();
});

describe('the inputs of an npm workspaces monorepo', () => {
  it("installs from the lockfile with each workspace package's manifest, whose change makes a new key", async () => {
    const first = await readDependencyInputs(repo, (await temporary.git(['rev-parse', 'HEAD'])).trim());
    if (!first.ok) throw new Error(first.error);
    expect(first.files.map((file) => file.path)).toEqual(['package.json', 'package-lock.json', 'packages/util/package.json']);
    expect(first.plan).toMatchObject({ command: 'npm ci --ignore-scripts --no-audit --no-fund', keeps: 'node_modules', packages: 2 });
    await temporary.write('packages/util/package.json', JSON.stringify({ ...UTIL, version: '1.0.1' }));
    const second = await readDependencyInputs(repo, await temporary.commitAll('bump util'));
    expect(second.ok && second.key).not.toBe(first.key);
  });

  it("counts a package's own node_modules (a version conflicting with the root's) as the layer's, and installs the packages' manifests without a lockfile", async () => {
    await temporary.write('package-lock.json', lockfile({ 'packages/util/node_modules/is-number': { version: '6.0.0', resolved: 'https://registry.npmjs.org/is-number/-/is-number-6.0.0.tgz' } }));
    const nested = await readDependencyInputs(repo, await temporary.commitAll('a conflicting version'));
    if (!nested.ok) throw new Error(nested.error);
    expect(nested.files.map((file) => file.path)).toEqual(['package.json', 'package-lock.json', 'packages/util/package.json']);
    expect(nested.plan.packages).toBe(3);
    await temporary.git(['rm', '--quiet', 'package-lock.json']);
    const unlocked = await readDependencyInputs(repo, await temporary.commitAll('no lockfile'));
    if (!unlocked.ok) throw new Error(unlocked.error);
    expect(unlocked.files.map((file) => file.path)).toEqual(['package.json', 'packages/util/package.json']);
    expect(unlocked.plan).toMatchObject({ command: 'npm install --ignore-scripts --no-audit --no-fund', packages: 1 });
  });
});
