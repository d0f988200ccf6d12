import { describe, expect, it } from 'vitest';
import { resolveCgroupLayout } from './cgroup-layout.js';

const HYBRID_MOUNTS = [
  '25 30 0:22 / /sys/fs/cgroup rw,relatime shared:9 - tmpfs tmpfs rw,mode=755',
  '26 25 0:23 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw',
  '28 25 0:25 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory',
  '29 25 0:26 / /sys/fs/cgroup/pids rw,relatime shared:13 - cgroup cgroup rw,pids',
  '30 25 0:27 / /sys/fs/cgroup/freezer rw,relatime shared:14 - cgroup cgroup rw,freezer',
  '31 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:15 - cgroup cgroup rw,cpu,cpuacct',
].join('\n');

describe('the cgroup layout', () => {
  it('uses v1 where memory, pids and freezer are v1 hierarchies, each at the process’s own cgroup, with cpuacct where it is mounted', () => {
    const procSelfCgroup = ['9:freezer:/', '8:pids:/', '4:memory:/process_api/3c57', '2:cpu,cpuacct:/batch', '0::/'].join('\n');
    expect(resolveCgroupLayout({ procSelfCgroup, mountInfo: HYBRID_MOUNTS })).toEqual({
      ok: true,
      layout: {
        version: 1,
        memory: '/sys/fs/cgroup/memory/process_api/3c57',
        pids: '/sys/fs/cgroup/pids',
        freezer: '/sys/fs/cgroup/freezer',
        cpuacct: '/sys/fs/cgroup/cpu,cpuacct/batch',
      },
    });
    const withoutCpuacct = HYBRID_MOUNTS.split('\n').filter((line) => !line.includes('cpuacct')).join('\n');
    const layout = resolveCgroupLayout({ procSelfCgroup, mountInfo: withoutCpuacct });
    expect(layout.ok && layout.layout.version === 1 ? layout.layout.cpuacct : 'not v1').toBeNull();
  });

  it('uses v2 on a unified system, at the process’s own cgroup', () => {
    const mountInfo = '35 24 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot';
    const procSelfCgroup = '0::/user.slice/user-1000.slice/session-2.scope\n';
    expect(resolveCgroupLayout({ procSelfCgroup, mountInfo })).toEqual({
      ok: true,
      layout: { version: 2, own: '/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope' },
    });
  });

  it('reads a cgroup below a mount that shows only a subtree, and unescapes the mount point', () => {
    const mountInfo = '40 39 0:30 /docker/abc /opt/my\\040cgroups rw - cgroup2 cgroup2 rw';
    expect(resolveCgroupLayout({ procSelfCgroup: '0::/docker/abc/inner\n', mountInfo })).toEqual({
      ok: true,
      layout: { version: 2, own: '/opt/my cgroups/inner' },
    });
  });

  it('refuses a cgroup the mount does not show', () => {
    const mountInfo = '40 39 0:30 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw';
    const result = resolveCgroupLayout({ procSelfCgroup: '0::/elsewhere\n', mountInfo });
    expect(result.ok).toBe(false);
  });

  it('says which v1 controllers are missing', () => {
    const mountInfo = HYBRID_MOUNTS.split('\n').filter((line) => !line.includes('freezer')).join('\n');
    const result = resolveCgroupLayout({ procSelfCgroup: '8:pids:/\n4:memory:/\n0::/\n', mountInfo });
    expect(result).toEqual({ ok: false, error: 'cgroup v1 is mounted with only memory, pids of the memory, pids and freezer controllers colony needs' });
  });

  it('says when no cgroup file system is mounted at all', () => {
    const result = resolveCgroupLayout({ procSelfCgroup: '0::/\n', mountInfo: '22 1 8:1 / / rw - ext4 /dev/sda1 rw' });
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.error).toMatch(/no cgroup file system/);
  });
});
