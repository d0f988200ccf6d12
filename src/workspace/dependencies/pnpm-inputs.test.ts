import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepository, type Repository } from '../git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../testing/temporary-repository.js';
import { readDependencyInputs } from './dependency-inputs.js';

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
  it('installs with the pnpm major that writes its lockfile format, counting the packages the lockfile lists', async () => {
    const inputs = await readDependencyInputs(repo, (await temporary.git(['rev-parse', 'HEAD'])).trim());
    if (!inputs.ok) throw new Error(inputs.error);
    expect(inputs.plan).toEqual({
      command: expect.stringMatching(/^npm exec --yes --package=pnpm@9 -- pnpm install --frozen-lockfile --ignore-scripts --store-dir \.pnpm-store && npm install --prefix node_modules\/\.colony-pnpm .* pnpm@9 && /),
      keeps: 'node_modules',
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
    expect(pinned.plan.command).toMatch(/^npm exec --yes --package=pnpm@9\.15\.0 -- pnpm install/);
    expect(pinned.plan.registry).toBe('https://npm.example.test/');
    expect(pinned.files.map((file) => file.path)).toEqual(['package.json', 'pnpm-lock.yaml', '.npmrc']);
    expect(pinned.key).not.toBe(before.key);
  });

  it('says why there is no layer for a lockfile format it knows no pnpm for, a packageManager it cannot fetch, and a pnpm workspace', async () => {
    const unpinned = JSON.stringify({ name: 'p', dependencies: { 'is-number': '7.0.0' } });
    expect(await inputsAfter({ 'package.json': unpinned, 'pnpm-lock.yaml': "lockfileVersion: '42.0'\n" })).toEqual({
      ok: false,
      stopsRun: false,
      error: expect.stringMatching(/lockfileVersion 42\.0, which colony does not know a pnpm for: pin one with "packageManager"/),
    });
    expect(await inputsAfter({ 'package.json': JSON.stringify({ name: 'p', packageManager: 'pnpm@latest' }) })).toMatchObject({ ok: false, error: expect.stringMatching(/pnpm@latest, which names no pnpm version/) });
    expect(await inputsAfter({ 'package.json': unpinned, 'pnpm-lock.yaml': LOCKFILE, 'pnpm-workspace.yaml': 'packages:\n  - "packages/*"\n' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/pnpm workspace/),
    });
  });
});
