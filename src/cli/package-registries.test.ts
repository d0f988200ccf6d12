import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packageRegistryHosts } from './package-registries.js';

let dir = '';
afterEach(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('packageRegistryHosts', () => {
  it("is npm's registry alone for a project that names none", () => {
    dir = mkdtempSync(join(tmpdir(), 'colony-registries-'));
    expect(packageRegistryHosts(dir, {})).toEqual(['registry.npmjs.org']);
  });

  it("adds the hosts of .npmrc's registries (scoped too), .yarnrc.yml's server and npm_config_registry, once each, credentials aside", () => {
    dir = mkdtempSync(join(tmpdir(), 'colony-registries-'));
    writeFileSync(join(dir, '.npmrc'), 'registry=https://npm.example.test/\n@acme:registry=https://user:secret@acme.example.test/npm/\nsave-exact=true\n');
    writeFileSync(join(dir, '.yarnrc.yml'), 'nodeLinker: node-modules\nnpmRegistryServer: "https://yarn.example.test"\n');
    expect(packageRegistryHosts(dir, { npm_config_registry: 'https://npm.example.test/' })).toEqual(['registry.npmjs.org', 'registry.yarnpkg.com', 'npm.example.test', 'acme.example.test', 'yarn.example.test']);
  });

  it("adds yarn's own registry for a project that uses yarn, and the registry its .yarnrc names", () => {
    dir = mkdtempSync(join(tmpdir(), 'colony-registries-'));
    writeFileSync(join(dir, 'yarn.lock'), '# yarn lockfile v1\n');
    expect(packageRegistryHosts(dir, {})).toEqual(['registry.npmjs.org', 'registry.yarnpkg.com']);
    writeFileSync(join(dir, '.yarnrc'), 'registry "https://mirror.example.test/npm/"\n');
    expect(packageRegistryHosts(dir, {})).toEqual(['registry.npmjs.org', 'registry.yarnpkg.com', 'mirror.example.test']);
  });
});
