import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteTaskStore } from '../../src/store/sqlite/sqlite-task-store.js';

/**
 * What a run that was killed and resumed must still be, whatever the moments: every task closed
 * with exactly one delivered handoff (in the task table and in the log), no commit landed
 * twice, every commit a handoff names on the branch the run lands on, and an event log without
 * gaps or duplicates. Returns one line per problem; none when the run held.
 */
export async function chaosProblems(repoDir: string, stateDir: string, runId: string): Promise<string[]> {
  const problems: string[] = [];
  const database = join(stateDir, 'colony.db');
  const reader = new Database(database, { readonly: true, fileMustExist: true });
  try {
    const trunk = trunkOf(reader, runId);
    const { count, min, max } = reader.prepare('SELECT COUNT(*) AS count, MIN(seq) AS min, MAX(seq) AS max FROM events').get() as { count: number; min: number; max: number };
    if (min !== 1 || max !== count) problems.push(`the event log's seq runs ${min}..${max} over ${count} events: it has gaps or duplicates`);
    const delivered = reader
      .prepare("SELECT json_extract(data, '$.taskId') AS taskId, COUNT(*) AS times FROM events WHERE run_id = ? AND type = 'handoff.delivered' GROUP BY taskId")
      .all(runId) as { taskId: string; times: number }[];
    const loggedDeliveries = new Map(delivered.map((row) => [row.taskId, row.times]));
    const tasks = openSqliteTaskStore(database, { readOnly: true });
    try {
      const all = await tasks.listTasks(runId);
      const inbox = new Map<string, number>();
      for (const message of await tasks.deliveredHandoffs(runId)) {
        if (message.fromTaskId !== null) inbox.set(message.fromTaskId, (inbox.get(message.fromTaskId) ?? 0) + 1);
      }
      for (const task of all) {
        if (task.status === 'open' || task.status === 'running') problems.push(`task ${task.id} (${task.title}) is still ${task.status}`);
        if (task.parentTaskId !== null && inbox.get(task.id) !== 1) problems.push(`task ${task.id} has ${inbox.get(task.id) ?? 0} handoff(s) in its planner's inbox, not 1`);
        if (loggedDeliveries.get(task.id) !== 1) problems.push(`task ${task.id} has ${loggedDeliveries.get(task.id) ?? 0} handoff.delivered event(s), not 1`);
        for (const commit of task.handoff?.commits ?? []) {
          if (!isAncestor(repoDir, commit, trunk)) problems.push(`task ${task.id}'s handoff names ${commit}, which ${trunk} does not contain`);
        }
      }
      const root = all.find((task) => task.parentTaskId === null);
      if (root?.status !== 'done') problems.push(`the root task ended ${root?.status ?? 'missing'}, not done`);
    } finally {
      await tasks.close();
    }
    problems.push(...duplicatePatches(repoDir, trunk));
  } finally {
    reader.close();
  }
  return problems;
}

/** The branch the run lands on, from its `run.started` event: main in runs recorded before runs had a trunk. */
function trunkOf(reader: Database.Database, runId: string): string {
  const row = reader
    .prepare("SELECT json_extract(data, '$.trunk.branch') AS branch FROM events WHERE run_id = ? AND type = 'run.started' ORDER BY seq LIMIT 1")
    .get(runId) as { branch: string | null } | undefined;
  return row?.branch ?? 'main';
}

function isAncestor(repoDir: string, commit: string, trunk: string): boolean {
  try {
    execFileSync('git', ['merge-base', '--is-ancestor', commit, trunk], { cwd: repoDir, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Commits on the branch `trunk` whose change another commit on it already made: work landed twice. */
export function duplicatePatches(repoDir: string, trunk = 'main'): string[] {
  const log = execFileSync('git', ['log', '-p', '--no-merges', trunk, '--'], { cwd: repoDir, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const patches = execFileSync('git', ['patch-id', '--stable'], { cwd: repoDir, input: log, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const seen = new Map<string, string>();
  const problems: string[] = [];
  for (const line of patches.split('\n')) {
    const [patch, commit] = line.split(' ');
    if (patch === undefined || commit === undefined) continue;
    const earlier = seen.get(patch);
    if (earlier !== undefined) problems.push(`commits ${commit} and ${earlier} on ${trunk} make the same change`);
    else seen.set(patch, commit);
  }
  return problems;
}
