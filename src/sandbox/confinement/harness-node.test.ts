import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostLookup } from './command-path.js';
import { harnessNodeBinds, harnessNodeBindsFor } from './harness-node.js';
import type { MountLayout } from './mount-layout.js';

describe('showing the harness’s node to agents', () => {
  let base = '';
  let prefix = '';
  beforeAll(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'colony-harness-node-')));
    prefix = join(base, 'node');
    mkdirSync(join(prefix, 'bin'), { recursive: true });
    mkdirSync(join(prefix, 'lib', 'node_modules', 'npm'), { recursive: true });
    writeFileSync(join(prefix, 'bin', 'node'), '');
    mkdirSync(join(base, 'loose'));
    writeFileSync(join(base, 'loose', 'node'), '');
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const HOST_ONLY: MountLayout = [{ target: '/', source: '/' }];
  const everyDirectory = (searchable: boolean): HostLookup => () => ({ kind: 'directory', searchable });
  const agent = { identity: { uid: 2_000_000_001, gid: 2_000_000_000 }, coverPrivateDirectories: true };

  it('binds the install’s bin and lib/node_modules read-only at their own paths, and nothing else of the prefix', () => {
    expect(harnessNodeBinds(join(prefix, 'bin', 'node'))).toEqual([
      { source: join(prefix, 'bin'), target: join(prefix, 'bin'), writable: false },
      { source: join(prefix, 'lib', 'node_modules'), target: join(prefix, 'lib', 'node_modules'), writable: false },
    ]);
  });

  it('binds only the directory of a node that is not in an install’s bin, and nothing for one that is not there', () => {
    expect(harnessNodeBinds(join(base, 'loose', 'node'))).toEqual([{ source: join(base, 'loose'), target: join(base, 'loose'), writable: false }]);
    expect(harnessNodeBinds(join(base, 'missing', 'node'))).toEqual([]);
  });

  it('shows node only where the agent cannot reach it and the confinement can bind it', () => {
    const node = join(prefix, 'bin', 'node');
    expect(harnessNodeBindsFor(agent, node, HOST_ONLY, everyDirectory(true))).toEqual([]);
    expect(harnessNodeBindsFor(agent, node, HOST_ONLY, everyDirectory(false))).toHaveLength(2);
    // As root without covers, bubblewrap opens the sources as the agent's uid, which cannot.
    expect(harnessNodeBindsFor({ ...agent, coverPrivateDirectories: false }, node, HOST_ONLY, everyDirectory(false))).toEqual([]);
    // As the harness's own uid, the sources are its own.
    expect(harnessNodeBindsFor({ identity: null, coverPrivateDirectories: false }, node, HOST_ONLY, everyDirectory(false))).toHaveLength(2);
  });
});
