import { mkdirSync, mkdtempSync, rmSync, chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { ProcessRequest, ProcessResult, RunProcess } from '../../src/sandbox/process/types.js';
import type { CommandLimits } from '../../src/sandbox/process/command-limits.js';
import type { ConfinementExtras, Sandbox } from '../../src/sandbox/types.js';
import {
  leftoverCommandCgroups,
  leftoverProcessesOf,
  makeWorkspace,
  openTestSandbox,
  runCgroupsLeft,
} from '../../src/sandbox/testing/confined-test-support.js';
import { createRunCommandTool } from '../../src/tools/run-command-tool.js';
import type { RunCommandInput } from '../../src/tools/run-command-tool.js';
import type { ToolResult } from '../../src/tools/tool.js';

export type ConfinedMethod = 'bubblewrap' | 'unshare';

/** One agent of an adversarial test: its workspace, its uid and its runner. */
export interface ShellAgent {
  readonly workspace: string;
  readonly spillDir: string;
  uid: number;
  runner: RunProcess;
  /** Runs `command` in the agent's workspace (10 s unless given), with a short kill grace. */
  run(command: string, extra?: Partial<ProcessRequest>): Promise<ProcessResult>;
  /** The run_command tool over the agent's runner, as a model would call it. */
  tool(input: RunCommandInput): Promise<ToolResult>;
}

export interface ShellSetup {
  sandbox: Sandbox;
  /** Outside /tmp, so hiding it is the hidden list's work, not the private /tmp's. */
  root: string;
  /** The harness's state directory, hidden from every agent; the workspaces live in it. */
  state: string;
  a: ShellAgent;
  b: ShellAgent;
  /** A runner for agent a with other confinement settings. */
  runnerForA(options: { shareNetwork?: boolean; extras?: ConfinementExtras }): RunProcess;
}

/**
 * Registers the hooks of an adversarial file: a sandbox of `method` with the test limits, a
 * state directory with two agents' workspaces in it (each agent hiding the state directory,
 * as the harness does), and after every test the check that nothing is left behind: no live
 * process of either agent's uid and no command cgroup.
 */
export function useShellSandbox(options: { method: ConfinedMethod; runId: string; uidBase: number; limits?: Partial<CommandLimits> }): ShellSetup {
  const setup = {} as ShellSetup;
  beforeAll(async () => {
    setup.root = mkdtempSync('/var/tmp/colony-adversarial-');
    chmodSync(setup.root, 0o755);
    setup.state = join(setup.root, 'state');
    mkdirSync(join(setup.state, 'workspaces'), { recursive: true, mode: 0o755 });
    writeFileSync(join(setup.state, 'colony.db'), 'the harness state\n');
    setup.sandbox = await openTestSandbox({ method: options.method, runId: options.runId, uidBase: options.uidBase, ...(options.limits === undefined ? {} : { limits: options.limits }) });
    const agent = (name: string): ShellAgent => {
      const workspace = makeWorkspace(join(setup.state, 'workspaces', name));
      const spillDir = join(setup.state, 'spill', name);
      const made: ShellAgent = {
        workspace,
        spillDir,
        uid: -1,
        runner: setup.sandbox.runnerFor({ agentId: name, workspace, hidden: [setup.state], spillDir, shareNetwork: false }),
        run: (command, extra = {}) => made.runner({ command, cwd: workspace, timeoutMs: 10_000, killGraceMs: 300, ...extra }),
        tool: (input) => createRunCommandTool(workspace, { runProcess: made.runner }).execute(input, { signal: new AbortController().signal, callId: 'call-adversarial' }),
      };
      return made;
    };
    setup.a = agent('a');
    setup.b = agent('b');
    for (const each of [setup.a, setup.b]) {
      const identity = await each.run('id -u');
      if (identity.startError !== null || !/^\d+$/.test(identity.output.trim())) throw new Error(`the agent cannot run a command: ${identity.startError ?? identity.output}`);
      each.uid = Number(identity.output.trim());
    }
    setup.runnerForA = ({ shareNetwork = false, extras }) =>
      setup.sandbox.runnerFor({
        agentId: 'a',
        workspace: setup.a.workspace,
        hidden: [setup.state],
        spillDir: setup.a.spillDir,
        shareNetwork,
        ...(extras === undefined ? {} : { extras }),
      });
  });
  afterEach(async () => {
    expect(await leftoverProcessesOf(setup.a.uid)).toEqual([]);
    expect(await leftoverProcessesOf(setup.b.uid)).toEqual([]);
    expect(leftoverCommandCgroups(options.runId)).toEqual([]);
  });
  afterAll(async () => {
    await setup.sandbox?.close();
    if (setup.root !== undefined) rmSync(setup.root, { recursive: true, force: true });
    expect(runCgroupsLeft(options.runId)).toEqual([]);
  });
  return setup;
}

/** The output of a tool result, or its error. */
export function toolText(result: ToolResult): string {
  return result.ok ? result.output : `error: ${result.error}`;
}
