import { describe, expect, it } from 'vitest';
import { npmrcRegistries, yarnrcRegistries, yarnrcYmlRegistries } from './registry-config.js';

describe('the registries a configuration file names', () => {
  it("reads .npmrc's registry and its scopes' registries, the first registry= winning", () => {
    const text = 'save-exact=true\n@acme:registry=https://acme.example.test/npm/\nregistry = https://npm.example.test/\nregistry=https://later.example.test/\n';
    expect(npmrcRegistries(text)).toEqual({ main: 'https://npm.example.test/', scoped: ['https://acme.example.test/npm/'] });
    expect(npmrcRegistries('fund=false\n')).toEqual({ main: null, scoped: [] });
  });

  it("reads yarn 1's .yarnrc registry", () => {
    expect(yarnrcRegistries('# yarn\nregistry "https://mirror.example.test/npm/"\n')).toEqual({ main: 'https://mirror.example.test/npm/', scoped: [] });
    expect(yarnrcRegistries('network-timeout 60000\n')).toEqual({ main: null, scoped: [] });
  });

  it(".yarnrc.yml's top-level server is the registry; those under npmScopes are scoped", () => {
    const text = 'nodeLinker: node-modules\nnpmScopes:\n  acme:\n    npmRegistryServer: "https://npm.pkg.github.com"\nnpmRegistryServer: \'https://yarn.example.test\'\n';
    expect(yarnrcYmlRegistries(text)).toEqual({ main: 'https://yarn.example.test', scoped: ['https://npm.pkg.github.com'] });
  });
});
