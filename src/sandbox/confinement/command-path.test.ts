import { describe, expect, it } from 'vitest';
import { commandPath, pathStanding } from './command-path.js';
import type { HostEntry, HostLookup } from './command-path.js';
import { viewAt } from './mount-layout.js';
import type { MountLayout } from './mount-layout.js';

const open: HostEntry = { kind: 'directory', searchable: true };
const closed: HostEntry = { kind: 'directory', searchable: false };
const link = (target: string): HostEntry => ({ kind: 'link', target });

/** A host as the agent's uid sees it: the paths listed, everything else missing. */
function host(entries: Record<string, HostEntry>): HostLookup {
  return (path) => entries[path] ?? { kind: 'missing' };
}

const HOST = host({
  '/': open,
  '/usr': open,
  '/usr/bin': open,
  '/usr/local': open,
  '/usr/local/bin': open,
  '/bin': link('usr/bin'),
  '/root': closed,
  '/root/.local': open,
  '/root/.local/bin': open,
  '/root/work': open,
  '/root/work/bin': open,
  '/home': open,
  '/home/ann': closed,
  '/home/ann/bin': link('/usr/local/bin'),
  '/opt': open,
  '/opt/tools': link('/root/.local/bin'),
  '/opt/locked': closed,
  '/tmp': open,
  '/tmp/elsewhere': open,
  '/tmp/elsewhere/bin': open,
  '/tmp/workspace': open,
  '/tmp/workspace/bin': open,
  '/var': open,
  '/var/state': open,
  '/var/state/bin': open,
  '/var/state/workspace': open,
  '/var/state/workspace/bin': open,
});

const HOST_ONLY: MountLayout = [{ target: '/', source: '/' }];

describe('the PATH a confined command gets', () => {
  it('keeps the entries the agent can search, in their order', () => {
    expect(commandPath('/usr/local/bin:/usr/bin:/bin', HOST_ONLY, HOST)).toEqual({ path: '/usr/local/bin:/usr/bin:/bin', dropped: [] });
  });

  it('drops relative and empty entries and repeats, and names why', () => {
    expect(commandPath('/usr/bin::node_modules/.bin:/usr/bin:.:/bin', HOST_ONLY, HOST)).toEqual({
      path: '/usr/bin:/bin',
      dropped: [
        { entry: '', reason: 'relative' },
        { entry: 'node_modules/.bin', reason: 'relative' },
        { entry: '/usr/bin', reason: 'duplicate' },
        { entry: '.', reason: 'relative' },
      ],
    });
  });

  it('drops an entry below a directory the agent may not search, and one it may not search itself', () => {
    expect(commandPath('/root/.local/bin:/usr/bin:/opt/locked', HOST_ONLY, HOST)).toEqual({
      path: '/usr/bin',
      dropped: [
        { entry: '/root/.local/bin', reason: 'closed' },
        { entry: '/opt/locked', reason: 'closed' },
      ],
    });
  });

  it('keeps an entry that is not there yet below open directories, which a shell passes over', () => {
    expect(pathStanding('/usr/local/lib/node_modules/.bin', HOST_ONLY, HOST)).toBe('open');
  });

  it('follows symbolic links as the kernel does: through the directory holding the link, then to its target', () => {
    expect(pathStanding('/bin', HOST_ONLY, HOST)).toBe('open');
    expect(pathStanding('/home/ann/bin', HOST_ONLY, HOST)).toBe('closed');
    expect(pathStanding('/opt/tools', HOST_ONLY, HOST)).toBe('closed');
    const loop = host({ '/': open, '/a': link('/b'), '/b': link('/a') });
    expect(pathStanding('/a/bin', HOST_ONLY, loop)).toBe('gone');
  });

  it('drops what a cover leaves out and keeps what it shows again', () => {
    const covered: MountLayout = [...HOST_ONLY, { target: '/root', source: null }, { target: '/root/work', source: '/root/work' }];
    expect(viewAt(covered, '/root')).toEqual({ kind: 'way' });
    expect(viewAt(covered, '/root/.local')).toEqual({ kind: 'gone' });
    expect(commandPath('/root/.local/bin:/root/work/bin:/root', covered, HOST)).toEqual({
      path: '/root/work/bin:/root',
      dropped: [{ entry: '/root/.local/bin', reason: 'gone' }],
    });
  });

  it('drops what is under a fresh /tmp but for the workspace shown in it', () => {
    const fresh: MountLayout = [...HOST_ONLY, { target: '/tmp', source: null }, { target: '/tmp/workspace', source: '/tmp/workspace' }];
    expect(commandPath('/tmp/elsewhere/bin:/tmp/workspace/bin:/tmp/workspace/node_modules/.bin', fresh, HOST)).toEqual({
      path: '/tmp/workspace/bin:/tmp/workspace/node_modules/.bin',
      dropped: [{ entry: '/tmp/elsewhere/bin', reason: 'gone' }],
    });
  });

  it('drops what a hidden directory holds but for the workspace bound inside it', () => {
    const hidden: MountLayout = [...HOST_ONLY, { target: '/var/state', source: null }, { target: '/var/state/workspace', source: '/var/state/workspace' }];
    expect(commandPath('/var/state/bin:/var/state/workspace/bin', hidden, HOST)).toEqual({
      path: '/var/state/workspace/bin',
      dropped: [{ entry: '/var/state/bin', reason: 'gone' }],
    });
  });

  it('judges a bound directory by its source, and the way to it by the view', () => {
    const bound: MountLayout = [...HOST_ONLY, { target: '/root', source: null }, { target: '/root/.local/bin', source: '/root/.local/bin' }];
    expect(pathStanding('/root/.local/bin', bound, HOST)).toBe('open');
    const elsewhere: MountLayout = [...HOST_ONLY, { target: '/srv/tools', source: '/opt/locked' }];
    expect(pathStanding('/srv/tools', elsewhere, HOST)).toBe('closed');
  });
});
