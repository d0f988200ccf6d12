import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { resolveModel } from '../src/model/registry.js';
import { runRunSession } from '../src/orchestrator/session/run-session.js';
import { SIM_MODEL_FACTORY } from '../src/sim/sim-model-factory.js';
import type { EventStore } from '../src/store/events/event-store.js';
import { openPostgresEventStore, openPostgresTaskStore } from '../src/store/postgres/postgres-store.js';
import { openSqliteEventStore } from '../src/store/sqlite/sqlite-event-store.js';
import { openSqliteTaskStore } from '../src/store/sqlite/sqlite-task-store.js';
import { startPostgresCluster } from '../src/store/testing/postgres-cluster.js';
import { modelRespondedInput, toolEndedInput, toolStartedInput } from '../src/store/testing/event-store-fixtures.js';
import { RUN_ID, childTask, createdTask, handoffOf, rootTask } from '../src/store/testing/task-store-fixtures.js';
import type { TaskStore } from '../src/store/tasks/task-store.js';
import { createExampleRepository } from '../test/testing/example-repository.js';
import { median, repeat, type BenchRow, type BenchSection, type BenchSettings } from './bench-row.js';

const EVENTS = 50_000;
const BATCH = 100;
const TASKS = 1_000;
const CLAIMERS = 8;

/**
 * The PostgreSQL store against the SQLite one on one machine, the server a local cluster the
 * suite starts (as the tests do): appends to the log, claims by several runners at once, and a
 * whole run. SQLite writes to a file in the same process; PostgreSQL is a round trip over
 * loopback TCP to a server that syncs its own log, so the price of sharing a store between
 * machines shows here at its smallest.
 */
export async function benchPostgresStore(settings: BenchSettings): Promise<BenchSection> {
  const rounds = settings.runs ?? 3;
  const cluster = await startPostgresCluster();
  try {
    let databases = 0;
    const freshDatabase = () => cluster.database(`bench_${(databases += 1)}`);
    const appends = {
      sqlite: median(await repeat(rounds, () => withSqlite((path) => appendsPerSecond(openSqliteEventStore(path))))),
      postgres: median(await repeat(rounds, async () => appendsPerSecond(await openPostgresEventStore({ url: await freshDatabase() })))),
    };
    const claims = {
      sqlite: median(await repeat(rounds, () => withSqlite((path) => claimsPerSecond(openSqliteTaskStore(path))))),
      postgres: median(await repeat(rounds, async () => claimsPerSecond(await openPostgresTaskStore({ url: await freshDatabase(), poolSize: CLAIMERS })))),
    };
    const runs = {
      sqlite: median(await repeat(rounds, () => wholeRun(undefined))),
      postgres: median(await repeat(rounds, async () => wholeRun(await freshDatabase()))),
    };
    const rows: BenchRow[] = [
      { name: 'event log append + flush every 100: SQLite', value: appends.sqlite, unit: 'events/s', note: `median of ${rounds}; ${EVENTS.toLocaleString('en-US')} events, a mix of model.responded, tool.started and tool.ended` },
      { name: 'event log append + flush every 100: PostgreSQL', value: appends.postgres, unit: 'events/s', note: `median of ${rounds}; the same events, a batch of 100 per transaction under the log's advisory lock` },
      { name: 'event log: PostgreSQL against SQLite', value: (appends.postgres / appends.sqlite) * 100, unit: '%' },
      { name: `claims by ${CLAIMERS} runners at once: SQLite`, value: claims.sqlite, unit: 'tasks/s', note: `median of ${rounds}; ${TASKS.toLocaleString('en-US')} worker tasks, each claimed and completed (handoff delivered) by one of ${CLAIMERS} loops in one process` },
      { name: `claims by ${CLAIMERS} runners at once: PostgreSQL`, value: claims.postgres, unit: 'tasks/s', note: `median of ${rounds}; the same, a pool of ${CLAIMERS} connections, FOR UPDATE SKIP LOCKED` },
      { name: 'claims: PostgreSQL against SQLite', value: (claims.postgres / claims.sqlite) * 100, unit: '%' },
      { name: 'a whole run (toolbox, sim at zero latency, 4 workers): SQLite', value: runs.sqlite, unit: 's', note: `median of ${rounds}; every command, merge and handoff real, sandboxed` },
      { name: 'a whole run: PostgreSQL', value: runs.postgres, unit: 's', note: `median of ${rounds}; the same run with --store` },
      { name: 'a whole run: PostgreSQL against SQLite (time)', value: (runs.postgres / runs.sqlite) * 100, unit: '%' },
    ];
    const details = [
      'What sharing the store costs where it costs most: a log written in batches of 100, each a',
      "transaction over loopback TCP under the log's advisory lock, against SQLite in the same",
      'process; claims, each a transaction of its own with a round trip per statement; and a run at',
      'zero model latency, where the store is a larger share of the time than in any real run (a',
      "model's answer takes seconds). Agents wait on the log only where a record must be durable",
      "before an act (a tool call, a merge's intent), so these figures are what a run on PostgreSQL",
      "gives up when nothing but the harness works; they are the baseline for the worker hosts' figures.",
    ].join('\n');
    return { rows, details };
  } finally {
    await cluster.remove();
  }
}

async function withSqlite<Result>(use: (path: string) => Promise<Result>): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'colony-bench-store-'));
  try {
    return await use(join(dir, 'colony.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function appendsPerSecond(store: EventStore): Promise<number> {
  try {
    const started = performance.now();
    for (let index = 0; index < EVENTS; index += 1) {
      const subject = { runId: 'run-bench', agentId: `agent-${index % 40}` };
      const step = Math.floor(index / 120);
      const kind = index % 3;
      store.append(kind === 0 ? modelRespondedInput(subject, step, 'answer') : kind === 1 ? toolStartedInput(subject, step, '{"path":"src/a.ts"}') : toolEndedInput(subject, step, 'ok'));
      if ((index + 1) % BATCH === 0) await store.flush();
    }
    await store.flush();
    return EVENTS / ((performance.now() - started) / 1000);
  } finally {
    await store.close();
  }
}

async function claimsPerSecond(store: TaskStore): Promise<number> {
  try {
    const now = Date.now();
    const root = createdTask(await store.createTask(rootTask(), now));
    for (let index = 0; index < TASKS; index += 1) createdTask(await store.createTask(childTask(`task-${index}`, root.id), now));
    const handoff = handoffOf('done', 'built it');
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CLAIMERS }, async (_, claimer) => {
        const holder = `runner-${claimer}`;
        for (;;) {
          const task = await store.claim({ runId: RUN_ID, holder, kinds: ['worker'], now: Date.now(), leaseMs: 60_000 });
          if (task === null) return;
          const closed = await store.complete(task.id, { holder, attempt: task.attempt }, handoff, Date.now());
          if (!closed.ok) throw new Error(`a claimed task could not be completed: ${JSON.stringify(closed)}`);
        }
      }),
    );
    return TASKS / ((performance.now() - started) / 1000);
  } finally {
    await store.close();
  }
}

/** Seconds a whole `colony run` of the small example takes, its log and tasks in SQLite or in the store at `storeUrl`. */
async function wholeRun(storeUrl: string | undefined): Promise<number> {
  const repo = createExampleRepository('toolbox');
  try {
    const model = resolveModel('sim?seed=3', { env: {} }, { sim: SIM_MODEL_FACTORY });
    if (!model.ok) throw new Error(model.error);
    const started = performance.now();
    const result = await runRunSession({
      repoDir: repo.dir,
      workerModel: model.model,
      plannerModel: model.model,
      settings: { goalPath: join(repo.dir, 'GOAL.md'), workers: 4, workerMaxSteps: 100, plannerMaxSteps: 1_000 },
      storeUrl,
    });
    if (!result.ok || result.status !== 'done') throw new Error(`the run did not finish done: ${JSON.stringify(result.ok ? result.status : result.error)}`);
    return (performance.now() - started) / 1000;
  } finally {
    repo.cleanup();
  }
}

