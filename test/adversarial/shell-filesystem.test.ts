import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolverDirectory } from '../../src/sandbox/confinement/confinement-plan.js';
import { DEFAULT_SANDBOX_GID } from '../../src/sandbox/sandbox.js';
import { confinedTestsUnavailable } from '../../src/sandbox/testing/confined-test-support.js';
import { useShellSandbox } from './shell-support.js';
import type { ConfinedMethod } from './shell-support.js';

const hashOf = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

for (const [method, uidBase] of [['bubblewrap', 2_000_003_000], ['unshare', 2_000_003_500]] as [ConfinedMethod, number][]) {
  const unavailable = confinedTestsUnavailable(method);
  describe.skipIf(unavailable !== null)(`shell adversary, file system, ${method}${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
    const setup = useShellSandbox({ method, runId: `adversarial-files-${method}`, uidBase });

    it('cannot write to /etc', async () => {
      const result = await setup.a.run('echo owned > /etc/colony-adversarial');
      expect(result.exitCode).toBe(1);
      expect(result.output).toMatch(method === 'bubblewrap' ? /Read-only file system/ : /Permission denied/);
      expect(existsSync('/etc/colony-adversarial')).toBe(false);
    });

    it('cannot read /etc/shadow', async () => {
      const result = await setup.a.run('cat /etc/shadow');
      expect(result.exitCode).toBe(1);
      expect(result.output).toMatch(/Permission denied/);
    });

    it('does not see another agent’s workspace or the harness’s state', async () => {
      writeFileSync(join(setup.b.workspace, 'secret-of-b.txt'), 'b only\n');
      const result = await setup.a.run(
        `cat ${setup.b.workspace}/secret-of-b.txt; cat ${setup.state}/colony.db; ls ${setup.state}/workspaces; ls ${setup.state}/spill 2>&1 | wc -l`,
      );
      expect(result.output).toContain(`cat: ${setup.b.workspace}/secret-of-b.txt: No such file or directory`);
      expect(result.output).toContain(`cat: ${setup.state}/colony.db: No such file or directory`);
      expect(result.output).not.toContain('b only');
      expect(result.output).not.toContain('the harness state');
      expect(result.output.split('\n')).not.toContain('b');
    });

    it('gets a private, empty /run: no system bus, no user runtime directories, no database sockets', async () => {
      const result = await setup.a.run('ls -A /run; find /run -type s | wc -l; ls /run/dbus /run/user 2>&1');
      const resolver = resolverDirectory();
      const expected = resolver === null ? [] : [resolver.split('/')[2]];
      expect(result.output.split('\n').slice(0, expected.length)).toEqual(expected);
      expect(result.output).toContain(`${expected.length === 0 ? '' : '\n'}0\n`);
      expect(result.output).toMatch(/cannot access '\/run\/dbus': No such file or directory/);
    });

    it('writes its own workspace, with files the harness’s group can use', async () => {
      const result = await setup.a.run('echo made > made.txt && mkdir -p dir && echo deeper > dir/file');
      expect(result.exitCode).toBe(0);
      expect(readFileSync(join(setup.a.workspace, 'dir', 'file'), 'utf8')).toBe('deeper\n');
      expect(statSync(join(setup.a.workspace, 'made.txt')).gid).toBe(DEFAULT_SANDBOX_GID);
      expect(statSync(join(setup.a.workspace, 'made.txt')).uid).toBe(setup.a.uid);
    });

    it('cannot write outside its workspace through ../', async () => {
      const before = hashOf(join(setup.state, 'colony.db'));
      const result = await setup.a.run('echo x > ../escaped.txt; echo x > ../../escaped.txt; echo x >> ../../colony.db; echo x > ../../../escaped.txt; echo done');
      expect(result.output).toContain('done');
      expect(result.output.match(/(Read-only file system|Permission denied|No such file or directory)/g)?.length).toBe(4);
      for (const path of [join(setup.state, 'workspaces', 'escaped.txt'), join(setup.state, 'escaped.txt'), join(setup.root, 'escaped.txt')]) {
        expect(existsSync(path)).toBe(false);
      }
      expect(hashOf(join(setup.state, 'colony.db'))).toBe(before);
    });

    it('cannot write through a symbolic link to a file outside', async () => {
      const before = hashOf('/etc/passwd');
      const result = await setup.a.run('ln -s /etc/passwd x && echo pwned > x; echo status=$?; ln -s /etc y && echo pwned > y/colony-adversarial; cat x | head -1');
      expect(result.output).toContain('status=1');
      expect(result.output).toMatch(/^root:/m);
      expect(hashOf('/etc/passwd')).toBe(before);
      expect(existsSync('/etc/colony-adversarial')).toBe(false);
    });

    it('gets a private /tmp, emptied between commands and unseen by other agents', async () => {
      expect((await setup.a.run('echo note > /tmp/note && cat /tmp/note')).output).toBe('note\n');
      expect((await setup.a.run('cat /tmp/note')).output).toMatch(/No such file or directory/);
      expect((await setup.b.run('ls /tmp')).output).not.toContain('note');
    });

    it('cannot change its own spill files', async () => {
      const result = await setup.a.run('touch /tmp/colony-output/planted; echo status=$?');
      expect(result.output).toContain('status=1');
      expect(existsSync(join(setup.a.spillDir, 'planted'))).toBe(false);
    });
  });
}
