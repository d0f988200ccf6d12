import { link, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { measureDiskUsage } from './disk-usage.js';

describe('measureDiskUsage', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'colony-disk-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('counts allocated bytes, a hard-linked file once, and nothing for a missing path', async () => {
    await mkdir(join(dir, 'a', 'deep'), { recursive: true });
    await mkdir(join(dir, 'b'));
    await writeFile(join(dir, 'a', 'deep', 'big.bin'), Buffer.alloc(1 << 20, 1));
    const one = await measureDiskUsage([join(dir, 'a')]);
    expect(one).toBeGreaterThanOrEqual(1 << 20);
    await link(join(dir, 'a', 'deep', 'big.bin'), join(dir, 'b', 'same.bin'));
    const both = await measureDiskUsage([join(dir, 'a'), join(dir, 'b')]);
    expect(both - one).toBeLessThan(64 * 1024);
    expect(await measureDiskUsage([join(dir, 'a'), join(dir, 'a', 'deep')])).toBe(one);
    expect(await measureDiskUsage([join(dir, 'missing')])).toBe(0);
  });

  it('leaves out files that are hard links into trees already counted elsewhere', async () => {
    await mkdir(join(dir, 'layer'));
    await mkdir(join(dir, 'workspace'));
    await writeFile(join(dir, 'layer', 'shared.bin'), Buffer.alloc(1 << 20, 1));
    await link(join(dir, 'layer', 'shared.bin'), join(dir, 'workspace', 'shared.bin'));
    await writeFile(join(dir, 'workspace', 'own.txt'), 'mine\n');
    const alone = await measureDiskUsage([join(dir, 'workspace')]);
    const owned = await measureDiskUsage([join(dir, 'workspace')], { alreadyCounted: [join(dir, 'layer')] });
    expect(alone - owned).toBeGreaterThanOrEqual(1 << 20);
    expect(owned).toBeLessThan(64 * 1024);
  });
});
