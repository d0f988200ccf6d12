import { describe, expect, it } from 'vitest';
import { berryWorkspaces, pnpmImporters, pnpmLocalSources, pnpmPatches } from './workspace-packages.js';

describe("what a lockfile says of a monorepo's own files", () => {
  it("reads pnpm's importers, written out or empty, quoted or not", () => {
    const lockfile = ["lockfileVersion: '9.0'", '', 'importers:', '', '  .:', '    devDependencies: {}', '  packages/core: {}', "  'packages/web app':", '    dependencies: {}', '', 'packages: {}', ''].join('\n');
    expect(pnpmImporters(lockfile)).toEqual(['packages/core', 'packages/web app']);
  });

  it('reads the folders and tarballs pnpm copies packages from, each once', () => {
    const lockfile = [
      'packages:',
      "  '@demo/a@file:test-dep/a':",
      '    resolution: {directory: test-dep/a, type: directory}',
      "  '@demo/a@file:test-dep/a(react@19.2.8)':",
      '    resolution: {directory: test-dep/a, type: directory}',
      "  'b@file:vendor/b-1.0.0.tgz':",
      '    resolution: {tarball: file:vendor/b-1.0.0.tgz}',
      '  is-number@7.0.0:',
      '    resolution: {integrity: sha512-abc}',
    ].join('\n');
    expect(pnpmLocalSources(lockfile)).toEqual(['test-dep/a', 'vendor/b-1.0.0.tgz']);
  });

  it("reads pnpm's patches from pnpm-workspace.yaml and from package.json", () => {
    const workspace = "packages:\n  - packages/*\npatchedDependencies:\n  a@1.0.0: patches/a.patch\n  '@s/b@2.0.0': \"./patches/b.patch\"  # why\nonlyBuiltDependencies:\n  - esbuild\n";
    expect(pnpmPatches(workspace, { pnpm: { patchedDependencies: { 'c@1.0.0': 'patches/c.patch', 'a@1.0.0': 'patches/a.patch' } } })).toEqual(['patches/a.patch', 'patches/b.patch', 'patches/c.patch']);
    expect(pnpmPatches('', null)).toEqual([]);
  });

  it("reads yarn 2+'s workspaces from their resolutions, not the root", () => {
    const lockfile = ['"a@workspace:*, a@workspace:packages/a":', '  resolution: "a@workspace:packages/a"', '', '"root@workspace:.":', '  resolution: "root@workspace:."', ''].join('\n');
    expect(berryWorkspaces(lockfile)).toEqual(['packages/a']);
  });
});
