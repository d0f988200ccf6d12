import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepository, type Repository } from '../git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../testing/temporary-repository.js';
import { readDependencyInputs } from './dependency-inputs.js';
import { relockCommand } from './package-manager-inputs.js';

const LOCKFILE = [
  "lockfileVersion: '9.0'",
  '',
  'importers:',
  '  .:',
  '    dependencies:',
  '      is-number:',
  '        specifier: 7.0.0',
  '        version: 7.0.0',
  '',
  'packages:',
  '',
  '  is-number@7.0.0:',
  '    resolution: {integrity: sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==}',
  '',
  '  kind-of@6.0.3:',
  '    resolution: {integrity: sha512-dcS1ul+9tmeD95T+x28/ehLgd9mENa3LsvDTtzm3vyBEO7RPptvAD+t44WVXaUjTBRcrpFeFlC8WCruUR456hw==}',
  '',
].join('\n');

let temporary: TemporaryRepository;
let repo: Repository;

beforeAll(async () => {
  temporary = await createTemporaryRepository({ 'package.json': JSON.stringify({ name: 'p', dependencies: { 'is-number': '7.0.0' } }), 'pnpm-lock.yaml': LOCKFILE });
  const opened = await openRepository(temporary.root);
  if (!opened.ok) throw new Error(opened.error);
  repo = opened.repo;
});

afterAll(async () => {
  await temporary.remove();
});

async function inputsAfter(files: Readonly<Record<string, string>>) {
  for (const [path, text] of Object.entries(files)) await temporary.write(path, text);
  return readDependencyInputs(repo, await temporary.commitAll('change'));
}

describe('the inputs of a pnpm project', () => {
  it('installs with the pnpm major that reads its lockfile format, counting the packages the lockfile lists', async () => {
    const inputs = await readDependencyInputs(repo, (await temporary.git(['rev-parse', 'HEAD'])).trim());
    if (!inputs.ok) throw new Error(inputs.error);
    expect(inputs.plan).toEqual({
      command: expect.stringMatching(/^mkdir \.colony-pnpm && npm pack --silent --pack-destination \.colony-pnpm pnpm@10 >\/dev\/null && .* && node \.colony-pnpm\/bin\/pnpm\.cjs install --frozen-lockfile --ignore-scripts --store-dir \.pnpm-store && /),
      label: 'pnpm@10 install --frozen-lockfile --ignore-scripts --store-dir .pnpm-store',
      keeps: 'node_modules',
      manager: 'pnpm',
      registry: null,
      packages: 2,
    });
    expect(inputs.files.map((file) => file.path)).toEqual(['package.json', 'pnpm-lock.yaml']);
  });

  it('takes the version packageManager pins, without its hash, and the registry .npmrc names; either changes the key', async () => {
    const before = await readDependencyInputs(repo, (await temporary.git(['rev-parse', 'HEAD'])).trim());
    const pinned = await inputsAfter({
      'package.json': JSON.stringify({ name: 'p', packageManager: 'pnpm@9.15.0+sha512.abc', dependencies: { 'is-number': '7.0.0' } }),
      '.npmrc': 'registry=https://npm.example.test/\n',
    });
    if (!pinned.ok || !before.ok) throw new Error('expected inputs');
    expect(pinned.plan.command).toMatch(/ --pack-destination \.colony-pnpm pnpm@9\.15\.0 /);
    expect(pinned.plan.registry).toBe('https://npm.example.test/');
    expect(pinned.files.map((file) => file.path)).toEqual(['package.json', 'pnpm-lock.yaml', '.npmrc']);
    expect(pinned.key).not.toBe(before.key);
  });

  it('says why there is no layer for a lockfile format it knows no pnpm for, or a packageManager it cannot fetch', async () => {
    const unpinned = JSON.stringify({ name: 'p', dependencies: { 'is-number': '7.0.0' } });
    expect(await inputsAfter({ 'package.json': unpinned, 'pnpm-lock.yaml': "lockfileVersion: '42.0'\n" })).toEqual({
      ok: false,
      stopsRun: false,
      error: expect.stringMatching(/lockfileVersion 42\.0, which colony does not know a pnpm for: pin one with "packageManager"/),
    });
    expect(await inputsAfter({ 'package.json': JSON.stringify({ name: 'p', packageManager: 'pnpm@latest' }) })).toMatchObject({ ok: false, error: expect.stringMatching(/pnpm@latest, which names no pnpm version/) });
  });

  it("installs a pnpm workspace with pnpm-workspace.yaml and the package.json of every importer its lockfile names", async () => {
    const importers = LOCKFILE.replace("importers:\n", "importers:\n  packages/util:\n    dependencies:\n      kind-of:\n        specifier: 6.0.3\n        version: 6.0.3\n\n  packages/core: {}\n\n  'packages/web app':\n    {}\n\n");
    const unpinned = JSON.stringify({ name: 'p', dependencies: { 'is-number': '7.0.0' } });
    const workspace = await inputsAfter({
      'package.json': unpinned,
      'pnpm-lock.yaml': importers,
      'pnpm-workspace.yaml': 'packages:\n  - "packages/*"\n',
      'packages/util/package.json': JSON.stringify({ name: 'util', dependencies: { 'kind-of': '6.0.3' } }),
      'packages/web app/package.json': JSON.stringify({ name: 'web' }),
      'packages/core/package.json': JSON.stringify({ name: 'core' }),
    });
    if (!workspace.ok) throw new Error(workspace.error);
    expect(workspace.files.map((file) => file.path)).toEqual(['package.json', 'pnpm-lock.yaml', '.npmrc', 'pnpm-workspace.yaml', 'packages/util/package.json', 'packages/core/package.json', 'packages/web app/package.json']);
    // A file no install reads is not part of the key; a package's manifest is.
    const unrelated = await inputsAfter({ 'packages/util/index.js': 'module.exports = 1;\n' });
    expect(unrelated.ok && unrelated.key).toBe(workspace.key);
    const changed = await inputsAfter({ 'packages/web app/package.json': JSON.stringify({ name: 'web', version: '2.0.0' }) });
    expect(changed.ok && changed.key).not.toBe(workspace.key);
    // Patches pnpm applies, named in pnpm-workspace.yaml (pnpm 10) or package.json (earlier), are inputs; a missing one is named.
    const patched = await inputsAfter({
      'pnpm-workspace.yaml': 'packages:\n  - "packages/*"\npatchedDependencies:\n  kind-of@6.0.3: patches/kind-of@6.0.3.patch\n  \'is-number@7.0.0\': "./patches/is-number.patch"  # ours\n',
      'patches/kind-of@6.0.3.patch': '--- a\n+++ b\n',
      'patches/is-number.patch': '--- a\n+++ b\n',
    });
    if (!patched.ok) throw new Error(patched.error);
    expect(patched.files.map((file) => file.path).filter((path) => path.startsWith('patches/'))).toEqual(['patches/is-number.patch', 'patches/kind-of@6.0.3.patch']);
    await temporary.git(['rm', '--quiet', 'patches/is-number.patch']);
    expect(await readDependencyInputs(repo, await temporary.commitAll('patch gone'))).toMatchObject({ ok: false, error: expect.stringMatching(/^pnpm's patchedDependencies name patches\/is-number\.patch, which is not a file in commit/) });
    await temporary.write('patches/is-number.patch', '--- a\n+++ b\n');
    // An importer without its package.json is named.
    await temporary.git(['rm', '--quiet', 'packages/util/package.json']);
    expect(await readDependencyInputs(repo, await temporary.commitAll('util gone'))).toMatchObject({
      ok: false,
      error: 'pnpm-lock.yaml names the workspace package packages/util, which has no package.json in commit ' + (await temporary.git(['rev-parse', 'HEAD'])).trim().slice(0, 12),
    });
  });
});

describe('the inputs of a yarn project', () => {
  const CLASSIC = ['# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.', '# yarn lockfile v1', '', '', 'is-number@7.0.0:', '  version "7.0.0"', ''].join('\n');
  let yarnRepo: TemporaryRepository;
  let opened: Repository;

  beforeAll(async () => {
    yarnRepo = await createTemporaryRepository({ 'package.json': JSON.stringify({ name: 'y', dependencies: { 'is-number': '7.0.0' } }), 'yarn.lock': CLASSIC, '.yarnrc': 'registry "https://npm.example.test/"\n' });
    const result = await openRepository(yarnRepo.root);
    if (!result.ok) throw new Error(result.error);
    opened = result.repo;
  });

  afterAll(async () => {
    await yarnRepo.remove();
  });

  it('installs a yarn 1 lockfile with yarn 1 from the npm registry, yarn itself included, .yarnrc among the inputs', async () => {
    const inputs = await readDependencyInputs(opened, (await yarnRepo.git(['rev-parse', 'HEAD'])).trim());
    if (!inputs.ok) throw new Error(inputs.error);
    expect(inputs.plan.command).toMatch(/ yarn@1 >\/dev\/null && .* && node \.colony-yarn\/bin\/yarn\.js install --frozen-lockfile --ignore-scripts .* && ln -sf \.\.\/\.colony-yarn\/bin\/yarn\.js node_modules\/\.bin\/yarn$/);
    expect(inputs.plan.packages).toBe(1);
    expect(inputs.files.map((file) => file.path)).toEqual(['package.json', 'yarn.lock', '.yarnrc']);
  });

  it('installs a yarn 2+ lockfile with the yarn its format names, its cache, state and Plug\'n\'Play files kept in the layer, plugins and patches among the inputs', async () => {
    const berry = ['__metadata:', '  version: 8', '  cacheKey: 10c0', '', '"is-number@npm:7.0.0":', '  version: 7.0.0', '', '"y@workspace:.":', '  version: 0.0.0-use.local', ''].join('\n');
    await yarnRepo.write('yarn.lock', berry);
    await yarnRepo.write('.yarnrc.yml', 'npmRegistryServer: "https://yarn.example.test"\nplugins:\n  - path: .yarn/plugins/tools.cjs\n');
    await yarnRepo.write('.yarn/plugins/tools.cjs', 'module.exports = {};\n');
    await yarnRepo.write('.yarn/patches/is-number.patch', '--- a\n+++ b\n');
    await yarnRepo.write('.yarn/releases/yarn-4.0.0.cjs', '// not read: colony runs the yarn it fetched\n');
    const inputs = await readDependencyInputs(opened, await yarnRepo.commitAll('berry'));
    if (!inputs.ok) throw new Error(inputs.error);
    expect(inputs.plan).toMatchObject({ keeps: 'made', registry: 'https://yarn.example.test', packages: 1 });
    expect(inputs.plan.command).toMatch(/ @yarnpkg\/cli-dist@4 >\/dev\/null && /);
    expect(inputs.plan.command).toContain(' YARN_ENABLE_GLOBAL_CACHE=false YARN_CACHE_FOLDER=node_modules/.yarn-cache ');
    expect(inputs.plan.command).toMatch(/ node \.colony-yarn\/bin\/yarn\.js install --immutable --mode=skip-build && .* node_modules\/\.bin\/yarn$/);
    // The agents' yarn is the one the setup ran, whatever yarnPath the repository names.
    expect(inputs.plan.command).toContain(`echo 'YARN_IGNORE_PATH=1 exec node "$(dirname "$0")/../.colony-yarn/bin/yarn.js" "$@"' >> node_modules/.bin/yarn`);
    expect(inputs.files.map((file) => file.path)).toEqual(['package.json', 'yarn.lock', '.yarnrc', '.yarnrc.yml', '.yarn/patches/is-number.patch', '.yarn/plugins/tools.cjs']);

    // The node-modules linker manages node_modules itself: the cache stays out of it, and of the layer.
    await yarnRepo.write('.yarnrc.yml', 'nodeLinker: node-modules\nnpmScopes:\n  acme:\n    npmRegistryServer: "https://npm.acme.test"\n');
    const linked = await readDependencyInputs(opened, await yarnRepo.commitAll('node-modules linker'));
    if (!linked.ok) throw new Error(linked.error);
    expect(linked.plan).toMatchObject({ keeps: 'node_modules', registry: 'https://npm.example.test/' });
    expect(linked.plan.command).toContain(' YARN_CACHE_FOLDER=.yarn-cache ');
  });

  it('takes the yarn package.json pins over the lockfile', async () => {
    await yarnRepo.write('package.json', JSON.stringify({ name: 'y', packageManager: 'yarn@4.5.0+sha512.abc' }));
    const pinned = await readDependencyInputs(opened, await yarnRepo.commitAll('pinned berry'));
    expect(pinned).toMatchObject({ ok: true, plan: { command: expect.stringMatching(/ @yarnpkg\/cli-dist@4\.5\.0 >/) } });
    await yarnRepo.write('package.json', JSON.stringify({ name: 'y', packageManager: 'yarn@1.22.22' }));
    expect(await readDependencyInputs(opened, await yarnRepo.commitAll('pinned classic'))).toMatchObject({ ok: true, plan: { command: expect.stringMatching(/ yarn@1\.22\.22 >/) } });
  });

  it("reads a yarn 1 monorepo's packages from package.json's patterns, and a yarn 2+ one's from its lockfile", async () => {
    await yarnRepo.write('packages/a/package.json', JSON.stringify({ name: 'a' }));
    await yarnRepo.write('packages/b/package.json', JSON.stringify({ name: 'b' }));
    await yarnRepo.write('packages/a/node_modules/x/package.json', JSON.stringify({ name: 'x' }));
    await yarnRepo.write('tools/c/package.json', JSON.stringify({ name: 'c' }));
    await yarnRepo.write('package.json', JSON.stringify({ name: 'y', packageManager: 'yarn@1.22.22', workspaces: { packages: ['packages/**', 'tools/*', '!packages/b'] } }));
    const classic = await readDependencyInputs(opened, await yarnRepo.commitAll('classic workspaces'));
    if (!classic.ok) throw new Error(classic.error);
    expect(classic.files.map((file) => file.path).filter((path) => path.endsWith('/package.json'))).toEqual(['packages/a/package.json', 'tools/c/package.json']);

    const berry = [
      '__metadata:',
      '  version: 8',
      '',
      '"a@workspace:*, a@workspace:packages/a":',
      '  version: 0.0.0-use.local',
      '  resolution: "a@workspace:packages/a"',
      '',
      '"y@workspace:.":',
      '  version: 0.0.0-use.local',
      '  resolution: "y@workspace:."',
      '',
    ].join('\n');
    await yarnRepo.write('yarn.lock', berry);
    await yarnRepo.write('package.json', JSON.stringify({ name: 'y', packageManager: 'yarn@4.5.0', workspaces: ['packages/*'] }));
    const inputs = await readDependencyInputs(opened, await yarnRepo.commitAll('berry workspaces'));
    if (!inputs.ok) throw new Error(inputs.error);
    expect(inputs.files.map((file) => file.path).filter((path) => path.endsWith('/package.json'))).toEqual(['packages/a/package.json']);

    await yarnRepo.write('package.json', JSON.stringify({ name: 'y', packageManager: 'yarn@1.22.22', workspaces: ['packages/{a,b}'] }));
    expect(await readDependencyInputs(opened, await yarnRepo.commitAll('braces'))).toMatchObject({ ok: false, error: expect.stringMatching(/"packages\/\{a,b\}" uses glob syntax colony does not read/) });
  });
});

describe('writing a lockfile again for a merged package.json', () => {
  it('uses the manager the layer would, writing only the lockfile; yarn 1 has no such install', () => {
    const manifest = JSON.stringify({ name: 'p', dependencies: { 'is-number': '7.0.0' } });
    expect(relockCommand('pnpm-lock.yaml', manifest, LOCKFILE, '')).toEqual({ ok: true, command: expect.stringMatching(/ pnpm@10 >\/dev\/null && .* node \.colony-pnpm\/bin\/pnpm\.cjs install --lockfile-only --ignore-scripts$/) });
    const berry = relockCommand('yarn.lock', JSON.stringify({ name: 'p', packageManager: 'yarn@4.5.0' }), '__metadata:\n  version: 8\n', 'nodeLinker: node-modules\n');
    expect(berry).toEqual({ ok: true, command: expect.stringMatching(/ @yarnpkg\/cli-dist@4\.5\.0 >\/dev\/null && .* YARN_CACHE_FOLDER=\.yarn-cache .* install --mode=update-lockfile$/) });
    expect(relockCommand('yarn.lock', manifest, '# yarn lockfile v1\n', '')).toEqual({ ok: false, error: 'yarn 1 has no install that writes only its lockfile, so colony leaves yarn.lock to the agent' });
  });
});
