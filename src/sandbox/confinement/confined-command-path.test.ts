import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessResult, RunProcess } from '../process/types.js';
import type { Sandbox } from '../types.js';
import {
  confinedTestsUnavailable,
  leftoverCommandCgroups,
  leftoverProcessesOf,
  makeTestRoot,
  makeWorkspace,
  openTestSandbox,
} from '../testing/confined-test-support.js';

/**
 * The PATH a confined command gets, for real: a directory on it that the agent's uid may not
 * enter (under a 0700 directory, as `~/.local/bin` or an nvm install under /root is) is dropped,
 * so a missing program reads "not found" and not "Permission denied"; and the harness's own
 * node, installed under such a directory, is shown to the agent read-only and stays on PATH.
 */
for (const [method, uidBase] of [['bubblewrap', 2_000_010_000], ['unshare', 2_000_010_500]] as const) {
  const unavailable = confinedTestsUnavailable(method);
  describe.skipIf(unavailable !== null)(`the PATH of a confined command, ${method}${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
    const runId = `command-path-${method}`;
    let sandbox: Sandbox;
    let outer = '';
    let root = '';
    let workspace = '';
    let closedBin = '';
    let nodeBin = '';
    let runner: RunProcess;
    const run = (command: string): Promise<ProcessResult> => runner({ command, cwd: workspace, timeoutMs: 10_000, killGraceMs: 300 });

    beforeAll(async () => {
      // Outside /tmp and /var/tmp, which the confinement replaces: a directory there would be
      // missing inside, not closed.
      outer = mkdtempSync(join(homedir(), '.colony-command-path-'));
      expect(statSync(outer).mode & 0o777).toBe(0o700);
      closedBin = join(outer, 'tools', 'bin');
      mkdirSync(closedBin, { recursive: true });
      writeScript(join(closedBin, 'closed-tool'), 'echo closed tool');
      // A node install as nvm lays one out: bin/node, and bin/npm leading into lib/node_modules.
      const prefix = join(outer, 'node');
      nodeBin = join(prefix, 'bin');
      mkdirSync(nodeBin, { recursive: true });
      writeScript(join(nodeBin, 'node'), 'echo "fake node $*"');
      const npmCli = join(prefix, 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
      mkdirSync(join(npmCli, '..'), { recursive: true });
      writeFileSync(npmCli, '#!/usr/bin/env node\n', { mode: 0o755 });
      symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(nodeBin, 'npm'));
      root = makeTestRoot(`colony-command-path-${method}-`);
      workspace = makeWorkspace(join(root, 'workspace'));
      mkdirSync(join(workspace, 'bin'));
      writeScript(join(workspace, 'bin', 'open-tool'), 'echo open tool');
      sandbox = await openTestSandbox({
        method,
        runId,
        uidBase,
        parentEnvironment: { PATH: `${join(workspace, 'bin')}:${closedBin}:${nodeBin}:/usr/bin:/bin` },
        nodeExecutable: join(nodeBin, 'node'),
      });
      runner = sandbox.runnerFor({ agentId: 'worker', workspace, hidden: [], spillDir: join(root, 'spill'), shareNetwork: false });
    });
    afterEach(async () => {
      expect(await leftoverProcessesOf(uidBase + 1)).toEqual([]);
      expect(leftoverCommandCgroups(runId)).toEqual([]);
    });
    afterAll(async () => {
      await sandbox?.close();
      if (outer !== '') rmSync(outer, { recursive: true, force: true });
      if (root !== '') rmSync(root, { recursive: true, force: true });
    });

    it('reports a missing program as not found, not as a permission problem', async () => {
      // sh is dash here, as in npm scripts: an unsearchable PATH entry made it say "Permission denied".
      const result = await run('sh -c missing-tool');
      expect(result.output).toMatch(/missing-tool: not found/);
      expect(result.output).not.toMatch(/Permission denied/);
      expect(result.exitCode).toBe(127);
      const viaEnv = await run('env missing-tool');
      expect(viaEnv.output).toMatch(/No such file or directory/);
      expect(viaEnv.exitCode).toBe(127);
    });

    it('drops the directory the agent may not enter and keeps the others in their order', async () => {
      const result = await run('echo "$PATH"; sh -c open-tool');
      expect(result.output).toBe(`${join(workspace, 'node_modules', '.bin')}:${join(workspace, 'bin')}:${nodeBin}:/usr/bin:/bin\nopen tool\n`);
      expect(result.exitCode).toBe(0);
    });

    it("finds the project's own tools in the workspace's node_modules/.bin first, as package scripts do", async () => {
      mkdirSync(join(workspace, 'node_modules', '.bin'), { recursive: true });
      writeScript(join(workspace, 'node_modules', '.bin', 'open-tool'), 'echo the project’s own tool');
      try {
        const result = await run('open-tool; cd /; open-tool');
        expect(result.output).toBe('the project’s own tool\nthe project’s own tool\n');
      } finally {
        rmSync(join(workspace, 'node_modules'), { recursive: true, force: true });
      }
    });

    it('shows the harness’s node, installed under a private directory, and keeps it on PATH', async () => {
      const result = await run('command -v node; node --version; npm --help');
      expect(result.output).toBe(`${join(nodeBin, 'node')}\nfake node --version\nfake node ${join(nodeBin, 'npm')} --help\n`);
      expect(result.exitCode).toBe(0);
      const write = await run(`touch ${join(nodeBin, 'planted')} 2>&1 || echo refused`);
      expect(write.output).toMatch(/refused/);
    });

    it('names the dropped directory in its summary', () => {
      expect(sandbox.summary).toContain(`PATH without ${closedBin}`);
      expect(sandbox.summary).not.toContain(`PATH without ${nodeBin}`);
      expect(sandbox.summary).toContain(`node from ${nodeBin} shown read-only`);
    });
  });
}

function writeScript(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}
