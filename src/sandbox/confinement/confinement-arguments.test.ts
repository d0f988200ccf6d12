import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bubblewrapArguments } from './bubblewrap-sandbox.js';
import { DEFAULT_COMMAND_LIMITS } from '../process/command-limits.js';
import { commandStage, resolverDirectory } from './confinement-plan.js';
import type { ConfinementPlan } from './confinement-plan.js';
import { unshareArguments } from './unshare-sandbox.js';

describe('the confinement command lines', () => {
  // Outside /tmp: hidden paths under /tmp are dropped, since every command gets a fresh /tmp.
  let root = '';
  let plan: ConfinementPlan;
  beforeAll(() => {
    root = mkdtempSync('/var/tmp/colony-arguments-');
    chmodSync(root, 0o755);
    mkdirSync(join(root, 'state', 'workspaces', 'a', 'secrets'), { recursive: true });
    mkdirSync(join(root, 'closed', 'inner'), { recursive: true });
    chmodSync(join(root, 'closed'), 0o700);
    writeFileSync(join(root, 'token'), 'secret');
    symlinkSync(join(root, 'token'), join(root, 'token-link'));
    plan = {
      tools: { bwrap: '/usr/bin/bwrap', setpriv: '/usr/bin/setpriv', prlimit: '/usr/bin/prlimit', unshare: '/usr/bin/unshare', mount: '/usr/bin/mount', ip: '/usr/sbin/ip' },
      identity: { uid: 2_000_000_001, gid: 2_000_000_000 },
      limits: DEFAULT_COMMAND_LIMITS,
      workspace: join(root, 'state', 'workspaces', 'a'),
      hidden: [
        join(root, 'state'),
        join(root, 'state', 'workspaces', 'a', 'secrets'),
        join(root, 'token-link'),
        join(root, 'missing'),
        join(root, 'closed', 'inner'),
        '/tmp/anything',
        '/run/anything',
      ],
      binds: [{ source: '/opt', target: '/opt', writable: false }],
      spillDirectory: join(root, 'state', 'spill', 'a'),
      shareNetwork: false,
      prelude: '',
      coverPrivateDirectories: true,
    };
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('sets the limits as root, drops to the agent’s uid, then builds the view in order', () => {
    const workspace = plan.workspace;
    const directory = resolverDirectory();
    const resolver = directory === null ? [] : ['--ro-bind', directory, directory];
    expect(bubblewrapArguments(plan, workspace, 'make test')).toEqual([
      '/usr/bin/prlimit', '--cpu=600:605', `--fsize=${1024 ** 3}`, '--nofile=1024', '--core=0', '--',
      '/usr/bin/setpriv', '--reuid', '2000000001', '--regid', '2000000000', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--',
      '/usr/bin/bwrap',
      '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run', ...resolver, '--dir', '/tmp/home',
      '--tmpfs', join(root, 'state'),
      '--ro-bind', '/dev/null', join(root, 'token'),
      '--bind', workspace, workspace,
      '--tmpfs', join(workspace, 'secrets'),
      '--ro-bind', '/opt', '/opt',
      '--ro-bind', join(root, 'state', 'spill', 'a'), '/tmp/colony-output',
      '--remount-ro', join(root, 'state'),
      '--remount-ro', join(workspace, 'secrets'),
      '--unshare-user', '--disable-userns', '--unshare-all',
      '--die-with-parent', '--new-session', '--chdir', workspace,
      '--', '/bin/bash', '-c', commandStage(''), 'colony-command', 'make test',
    ]);
  });

  it('keeps the network only when asked, and runs the prelude before the command', () => {
    const args = bubblewrapArguments({ ...plan, shareNetwork: true, prelude: 'start-bridge &' }, plan.workspace, 'curl example.org');
    expect(args.slice(args.indexOf('--unshare-all'), args.indexOf('--unshare-all') + 2)).toEqual(['--unshare-all', '--share-net']);
    expect(args.at(-3)).toBe('printf started >&3\nexec 3>&-\nstart-bridge &\nexec /bin/bash -c "$1"');
  });

  it('keeps the harness’s uid when it is not root, setting only no_new_privs', () => {
    const args = bubblewrapArguments({ ...plan, identity: null }, plan.workspace, 'true');
    expect(args.slice(6, 9)).toEqual(['/usr/bin/setpriv', '--no-new-privs', '--']);
  });

  it('covers a private directory on the way as root before dropping the uid, and binds a git directory holding the state before hiding it', () => {
    const gitDir = join(root, 'closed', 'inner');
    const workspace = join(gitDir, 'colony', 'workspaces', 'a');
    mkdirSync(workspace, { recursive: true });
    const covered = { ...plan, workspace, hidden: [join(gitDir, 'colony')], binds: [{ source: gitDir, target: gitDir, writable: false }], spillDirectory: null };
    const args = bubblewrapArguments(covered, workspace, 'true');
    expect(args.slice(6, 11)).toEqual(['/usr/bin/unshare', '--mount', '--propagation', 'private', '--']);
    const stage = args.indexOf('colony-cover-stage');
    expect(args.slice(stage + 1, stage + 7)).toEqual(['2', 'cover', join(root, 'closed'), 'show', gitDir, '/usr/bin/setpriv']);
    const at = (...sequence: string[]) => args.findIndex((_, index) => sequence.every((word, offset) => args[index + offset] === word));
    expect(at('--ro-bind', gitDir, gitDir)).toBeGreaterThan(0);
    expect(at('--ro-bind', gitDir, gitDir)).toBeLessThan(at('--tmpfs', join(gitDir, 'colony')));
    expect(at('--tmpfs', join(gitDir, 'colony'))).toBeLessThan(at('--bind', workspace, workspace));
    // Not root, or where root cannot make a mount namespace: no stage, as before.
    expect(bubblewrapArguments({ ...covered, coverPrivateDirectories: false }, workspace, 'true')).not.toContain('colony-cover-stage');
    // The unshare fallback replaces /var/tmp whole and makes the way to the workspace there as root: nothing to cover.
    const unshare = unshareArguments(covered, workspace, 'true');
    expect(unshare.slice(-15, -10)).toEqual([gitDir, gitDir, 'ro', '0', '0']);
  });

  it('keeps the state directory hidden inside a git directory bound under /tmp, which a confined command otherwise gets fresh', () => {
    const base = mkdtempSync('/tmp/colony-arguments-');
    try {
      const gitDir = join(base, 'repo', '.git');
      const state = join(gitDir, 'colony');
      const workspace = join(state, 'workspaces', 'a');
      mkdirSync(workspace, { recursive: true });
      const nested: ConfinementPlan = { ...plan, identity: null, workspace, hidden: [state], binds: [{ source: gitDir, target: gitDir, writable: false }], spillDirectory: null };
      const args = bubblewrapArguments(nested, workspace, 'git status');
      const at = (...sequence: string[]) => args.findIndex((_, index) => sequence.every((word, offset) => args[index + offset] === word));
      expect(at('--ro-bind', gitDir, gitDir)).toBeGreaterThan(0);
      expect(at('--tmpfs', state)).toBeGreaterThan(at('--ro-bind', gitDir, gitDir));
      expect(at('--bind', workspace, workspace)).toBeGreaterThan(at('--tmpfs', state));
      expect(unshareArguments(nested, workspace, 'git status')).toContain(state);
      // Nothing brings a hidden path under /tmp back without such a bind: it is left to the fresh /tmp.
      expect(bubblewrapArguments({ ...nested, binds: [], workspace: plan.workspace }, plan.workspace, 'true')).not.toContain(state);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('gives the unshare root stage the paths to hide and the uid to drop to', () => {
    const args = unshareArguments(plan, plan.workspace, 'make test');
    expect(args.slice(6, 10)).toEqual(['/usr/bin/setpriv', '--pdeathsig', 'KILL', '--']);
    expect(args.slice(10, 20)).toEqual(['/usr/bin/unshare', '--pid', '--fork', '--kill-child', '--mount', '--propagation', 'private', '--ipc', '--uts', '--net']);
    const stageArguments = args.slice(args.indexOf('colony-root-stage') + 1);
    expect(stageArguments).toEqual([
      '2000000001', '2000000000', plan.workspace, plan.workspace, join(root, 'state', 'spill', 'a'), resolverDirectory() ?? '', '/usr/sbin/ip', commandStage(''), 'make test',
      '2', join(root, 'state'), join(plan.workspace, 'secrets'),
      '1', join(root, 'token'),
      '1', '/opt', '/opt', 'ro', '0',
      '0',
      '/usr/bin/setpriv', '--reuid', '2000000001', '--regid', '2000000000', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--',
    ]);
  });
});
