import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcessRunnerConformance } from '../testing/process-runner.conformance.js';
import type { Sandbox } from '../types.js';
import {
  commandCpuCounted,
  confinedTestsUnavailable,
  leftoverCommandCgroups,
  leftoverProcessesOf,
  makeTestRoot,
  openTestSandbox,
  prepareWorkspace,
  runCgroupsLeft,
} from '../testing/confined-test-support.js';

const unavailable = confinedTestsUnavailable('bubblewrap');
const RUN = 'bubblewrap-conformance';
const UID_BASE = 2_000_001_000;

describe.skipIf(unavailable !== null)(`the bubblewrap sandbox${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
  let sandbox: Sandbox;
  let root = '';
  beforeAll(async () => {
    root = makeTestRoot('colony-bwrap-conformance-');
    sandbox = await openTestSandbox({ runId: RUN, uidBase: UID_BASE });
  });
  afterAll(async () => {
    await sandbox?.close();
    rmSync(root, { recursive: true, force: true });
  });

  describeProcessRunnerConformance(
    'bubblewrap',
    (cwd) => sandbox.runnerFor({ agentId: 'conformance', workspace: cwd, hidden: [], spillDir: join(root, 'spill'), shareNetwork: false }),
    { prepareWorkspace },
  );

  it('counts the CPU a command used, where the kernel counts it for the command’s cgroup', async () => {
    const workspace = join(root, 'cpu-workspace');
    mkdirSync(workspace);
    prepareWorkspace(workspace);
    const run = sandbox.runnerFor({ agentId: 'cpu', workspace, hidden: [], spillDir: join(root, 'spill'), shareNetwork: false });
    const busy = await run({ command: 'count() { i=0; while [ $i -lt 50000 ]; do i=$((i+1)); done; }; count & count; wait', cwd: workspace, timeoutMs: 60_000 });
    const idle = await run({ command: 'true', cwd: workspace, timeoutMs: 60_000 });
    expect(busy.exitCode).toBe(0);
    if (!commandCpuCounted()) {
      expect(busy.cpuMs).toBeNull();
      return;
    }
    // Counting to 50,000 twice in bash takes a tenth of a second of CPU or more, each well inside the test sandbox's 1 s per process; `true` next to nothing.
    expect(busy.cpuMs).toBeGreaterThan(40);
    expect(idle.cpuMs).toBeLessThan(busy.cpuMs ?? 0);
  });

  it('leaves no process of the agent’s uid and no command cgroup behind', async () => {
    expect(await leftoverProcessesOf(UID_BASE + 1)).toEqual([]);
    expect(leftoverCommandCgroups(RUN)).toEqual([]);
    expect(runCgroupsLeft(RUN).length).toBeGreaterThan(0);
  });
});
