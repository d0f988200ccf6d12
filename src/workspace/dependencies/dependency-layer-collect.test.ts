import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectDependencyLayers } from './dependency-layer-collect.js';
import { recordDirOf, recordLayerUse, touchLastUsed } from './dependency-layer-records.js';

let base: string;
let cacheDir: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'colony-layers-'));
  cacheDir = join(base, 'cache');
  await mkdir(cacheDir);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/** A layer folder as an install leaves it, last used `minutesAgo` minutes ago. */
async function makeLayer(index: number, minutesAgo: number): Promise<string> {
  const key = index.toString(16).padStart(64, '0');
  const layerDir = join(cacheDir, key);
  await mkdir(join(layerDir, 'node_modules', 'x'), { recursive: true });
  await writeFile(join(layerDir, 'node_modules', 'x', 'index.js'), 'module.exports = 1;\n');
  await touchLastUsed(layerDir);
  const when = new Date(Date.now() - minutesAgo * 60_000);
  await utimes(join(recordDirOf(layerDir), 'last-used'), when, when);
  return key;
}

async function layersLeft(): Promise<string[]> {
  return (await readdir(cacheDir)).filter((name) => /^[0-9a-f]{64}$/.test(name)).sort();
}

/** The id of a process that has ended. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('collectDependencyLayers', () => {
  it('keeps the most recently used layers and deletes the older ones with their records', async () => {
    const keys = [await makeLayer(1, 50), await makeLayer(2, 40), await makeLayer(3, 30), await makeLayer(4, 20), await makeLayer(5, 10)];
    const collected = await collectDependencyLayers(cacheDir, { keep: 2 });
    expect([...collected.removed].sort()).toEqual([keys[0], keys[1], keys[2]].sort());
    expect(collected.problems).toEqual([]);
    expect(await layersLeft()).toEqual([keys[3], keys[4]].sort());
    expect((await readdir(join(cacheDir, '.records'))).sort()).toEqual([keys[3], keys[4]].sort());
  });

  it('never deletes a layer a live workspace uses, and deletes it once the workspace is gone', async () => {
    const old = await makeLayer(1, 60);
    const recent = await makeLayer(2, 1);
    const workspace = join(base, 'workspace');
    await mkdir(workspace);
    await recordLayerUse(join(cacheDir, old), workspace);
    await utimes(join(recordDirOf(join(cacheDir, old)), 'last-used'), new Date(0), new Date(0));

    expect((await collectDependencyLayers(cacheDir, { keep: 1 })).removed).toEqual([]);
    expect(await layersLeft()).toEqual([old, recent].sort());

    await rm(workspace, { recursive: true });
    expect((await collectDependencyLayers(cacheDir, { keep: 1 })).removed).toEqual([old]);
    expect(await layersLeft()).toEqual([recent]);
  });

  it('keeps protected layers whatever their age', async () => {
    const old = await makeLayer(1, 60);
    const recent = await makeLayer(2, 1);
    const collected = await collectDependencyLayers(cacheDir, { keep: 0, protect: [old] });
    expect(collected.removed).toEqual([recent]);
    expect(await layersLeft()).toEqual([old]);
  });

  it('clears installs abandoned by a dead process and trash, and leaves a running install alone', async () => {
    const staging = join(cacheDir, '.staging');
    const abandoned = join(staging, `abcdef012345-${deadPid()}-a1b2c3`);
    const running = join(staging, `abcdef012345-${process.pid}-d4e5f6`);
    await mkdir(join(abandoned, 'node_modules'), { recursive: true });
    await mkdir(join(running, 'node_modules'), { recursive: true });
    await mkdir(join(cacheDir, '.trash', 'old-layer', 'node_modules'), { recursive: true });
    await collectDependencyLayers(cacheDir);
    expect(await readdir(staging)).toEqual([`abcdef012345-${process.pid}-d4e5f6`]);
    expect(await readdir(join(cacheDir, '.trash'))).toEqual([]);
  });

  it('does nothing for a cache folder that does not exist yet', async () => {
    expect(await collectDependencyLayers(join(base, 'missing'))).toEqual({ removed: [], problems: [] });
  });
});
