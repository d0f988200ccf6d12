import { rmSync } from 'node:fs';
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

  it('leaves no process of the agent’s uid and no command cgroup behind', async () => {
    expect(await leftoverProcessesOf(UID_BASE + 1)).toEqual([]);
    expect(leftoverCommandCgroups(RUN)).toEqual([]);
    expect(runCgroupsLeft(RUN).length).toBeGreaterThan(0);
  });
});
