import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcessRunnerConformance } from '../testing/process-runner.conformance.js';
import type { Sandbox } from '../types.js';
import {
  confinedTestsUnavailable,
  leftoverCommandCgroups,
  leftoverProcessesOf,
  makeTestRoot,
  openTestSandbox,
  prepareWorkspace,
} from '../testing/confined-test-support.js';

const unavailable = confinedTestsUnavailable('unshare');
const RUN = 'unshare-conformance';
const UID_BASE = 2_000_002_000;

describe.skipIf(unavailable !== null)(`the unshare sandbox${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
  let sandbox: Sandbox;
  let root = '';
  beforeAll(async () => {
    root = makeTestRoot('colony-unshare-conformance-');
    sandbox = await openTestSandbox({ method: 'unshare', runId: RUN, uidBase: UID_BASE });
  });
  afterAll(async () => {
    await sandbox?.close();
    rmSync(root, { recursive: true, force: true });
  });

  describeProcessRunnerConformance(
    'unshare',
    (cwd) => sandbox.runnerFor({ agentId: 'conformance', workspace: cwd, hidden: [], spillDir: join(root, 'spill'), shareNetwork: false }),
    { prepareWorkspace },
  );

  it('says plainly that it is weaker', () => {
    expect(sandbox.method).toBe('unshare');
    expect(sandbox.summary).toMatch(/WEAKER than bubblewrap/);
    expect(sandbox.summary).toMatch(/WRITABLE wherever file permissions allow/);
  });

  it('ends a command whose timeout fires while its confinement is being set up at once, by SIGTERM', async () => {
    const cwd = join(root, 'early-timeout');
    mkdirSync(cwd);
    prepareWorkspace(cwd);
    const runner = sandbox.runnerFor({ agentId: 'conformance', workspace: cwd, hidden: [], spillDir: join(root, 'spill'), shareNetwork: false });
    // Spread over the time the root stage takes to build the command's view, so some land in it.
    for (const timeoutMs of [5, 20, 40, 60, 80, 100, 130, 160, 200]) {
      const result = await runner({ command: 'sleep 60', cwd, timeoutMs, killGraceMs: 10_000 });
      expect({ timeoutMs, timedOut: result.timedOut, signal: result.signal, graceWaited: result.durationMs >= 10_000 })
        .toEqual({ timeoutMs, timedOut: true, signal: 'SIGTERM', graceWaited: false });
    }
  }, 30_000);

  it('leaves no process of the agent’s uid and no command cgroup behind', async () => {
    expect(await leftoverProcessesOf(UID_BASE + 1)).toEqual([]);
    expect(leftoverCommandCgroups(RUN)).toEqual([]);
  });
});
