import { foldRunStatus } from '../../observe/status/run-status.js';
import { acceptanceLines, budgetLines, greenLines, promptCacheLines, trunkRewriteLines, wallTime } from '../../observe/status/format-run-status.js';
import { type RunStatus } from '../../observe/status/types.js';
import type { RunSessionResult } from '../../orchestrator/session/run-session.js';
import { mayHoldRuns, openRunLogToRead, openTaskTableToRead, storeLockIsFree, type RunState } from '../../orchestrator/setup/run-state.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { shellWord } from '../../errors/shell-word.js';

/**
 * The status of a run in a run state's log: the given run, or the one started last. Null when
 * the log holds no run. A run that never recorded its end while no process holds the run lock
 * (the state directory's, or the store's) was interrupted (killed, or the machine went down).
 */
export async function readRunStatus(state: RunState, runId?: string): Promise<RunStatus | null> {
  if (!mayHoldRuns(state)) return null;
  const events = await openRunLogToRead(state);
  // Read-only: a status never creates or migrates the task table under a run. A state
  // directory only `colony work` used has none, and its runs have no tasks.
  let tasks: TaskStore | null = null;
  try {
    tasks = await openTaskTableToRead(state);
    const id = runId ?? (await events.read({ types: ['run.started'] })).at(-1)?.runId;
    if (id === undefined) return null;
    const status = foldRunStatus({
      events: await events.read({ runId: id }),
      tasks: (await tasks?.listTasks(id)) ?? [],
      deliveredHandoffs: (await tasks?.deliveredHandoffs(id)) ?? [],
      runId: id,
      now: Date.now(),
    });
    if (status === null || status.run.state !== 'running' || !(await storeLockIsFree(state))) return status;
    return { ...status, run: { ...status.run, state: 'interrupted' } };
  } finally {
    await tasks?.close();
    await events.close();
  }
}

/** What `colony run` prints when it returns; `inStore` when the run's log is in a store the commands it names need `--store` for. */
export function formatRunSummary(result: Extract<RunSessionResult, { ok: true }>, status: RunStatus | null, inStore = false): string {
  const store = inStore ? ' --store URL' : '';
  const lines = ['', `run ${result.runId}: ${result.status} in ${wallTime(result.durationMs)}`];
  if (result.rootHandoff !== null) lines.push(`root planner: ${result.rootHandoff.status}: ${result.rootHandoff.summary}`);
  if (status !== null) {
    const byStatus = Object.entries(status.tasks.byStatus)
      .filter(([, count]) => count > 0)
      .map(([name, count]) => `${count} ${name}`)
      .join(', ');
    lines.push(`tasks: ${status.tasks.total}${byStatus === '' ? '' : ` (${byStatus})`}; handoffs delivered: ${status.handoffs.delivered}; commits landed: ${status.commits.landed}`);
    const cost = status.costKnown ? `$${status.costUsd.toFixed(2)}` : `at least $${status.costUsd.toFixed(2)} (some calls had no price)`;
    lines.push(`agents: ${status.agents.length}; model calls: ${status.modelCalls}; tokens: ${status.tokens.input} in, ${status.tokens.output} out; cost: ${cost}`);
    lines.push(...promptCacheLines(status).map((line) => line.replace(/^Prompt/, 'prompt')));
    lines.push(...acceptanceLines(status).map((line) => line.replace(/^Acceptance/, 'acceptance')));
    lines.push(...greenLines(status).map((line) => line.replace(/^Green:/, 'green:')));
  }
  if (result.check !== null) {
    lines.push(`check on ${result.mainBranch}: \`${result.check.command}\` ${result.check.passed ? 'passed' : 'FAILED'} at ${result.check.commit.slice(0, 12)}`);
  } else if (result.rootHandoff !== null) {
    lines.push(`check on ${result.mainBranch}: none (no colony-spec test command and no npm test script)`);
  }
  if (status?.budget != null) lines.push(...budgetLines(status.budget).map((line) => line.replace(/^(\w+):/, (_, name: string) => `${name.toLowerCase()}:`)));
  if (result.status === 'stopped') {
    lines.push(`The run was stopped; its unfinished tasks wait, with their agents' conversations and workspaces. Continue it with: colony resume --repo ${shellWord(status?.run.repo ?? '.')} --state ${shellWord(result.stateDir)}${store}`);
  }
  if (status !== null) lines.push(...trunkRewriteLines(status.trunkRewrites).map((line) => line.replace(/^Trunk/, 'trunk')));
  lines.push(...landingLines(result, status?.run.repo ?? null));
  lines.push(`More: colony status --state ${shellWord(result.stateDir)}${store}; colony events --state ${shellWord(result.stateDir)}${store}`, '');
  return lines.join('\n');
}

/** Where a run's or a worker's work landed, and how to review it and bring it in. */
export interface Landing {
  readonly mainBranch: string;
  readonly checkedOutBranch: string;
  readonly startCommit: string;
  readonly mainCommit: string;
}

/**
 * Where the work is: on the branch checked out (kept in step), or on a branch of the run's own,
 * with the commands to review it and bring it into the user's branch.
 */
export function landingLines(landing: Landing, repo: string | null): string[] {
  const { mainBranch: trunk, checkedOutBranch: yours, mainCommit } = landing;
  const at = mainCommit.slice(0, 12);
  if (trunk === yours) return [`${trunk} is at ${at}.`];
  if (mainCommit === landing.startCommit) return [`Nothing landed on ${trunk} this time; your ${yours} was not touched.`];
  const inRepo = repo === null ? '' : ` --repo ${shellWord(repo)}`;
  const git = repo === null ? 'git' : `git -C ${shellWord(repo)}`;
  const range = `${shellWord(yours)}..${shellWord(trunk)}`;
  return [
    `The work is on ${trunk} (at ${at}); your ${yours} was not touched.`,
    `  review it:   ${git} log --oneline ${range}`,
    `               ${git} diff ${shellWord(yours)}...${shellWord(trunk)}`,
    `  bring it in: colony land${inRepo}   (into ${yours}, the branch checked out)`,
  ];
}
