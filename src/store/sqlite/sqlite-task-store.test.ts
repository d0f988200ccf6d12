import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toolStartedInput } from '../testing/event-store-fixtures.js';
import { openSqliteEventStore } from './sqlite-event-store.js';
import { openSqliteStoreConnection } from './sqlite-connection.js';
import { migrateSchemaPart } from './sqlite-migrations.js';
import { TASK_TABLE_SCHEMA } from './sqlite-task-schema.js';
import { CLAIM_CANDIDATE_SQL, openSqliteTaskStore } from './sqlite-task-store.js';
import type { SqliteTaskStoreOptions } from './sqlite-task-store.js';
import { describeTaskStoreConformance } from '../testing/task-store.conformance.js';
import { RUN_ID, childTask, handoffOf, rootTask } from '../testing/task-store-fixtures.js';
import type { ClaimRequest, TaskStore } from '../tasks/task-store.js';
import { sqliteStoreUnderTest } from '../testing/sqlite-store-under-test.js';

const ROOT = rootTask().id;

function workerClaim(holder: string, now: number, leaseMs: number): ClaimRequest {
  return { runId: RUN_ID, holder, kinds: ['worker'], now, leaseMs };
}

describeTaskStoreConformance('sqlite', () => sqliteStoreUnderTest('colony-tasks-', (path) => openSqliteTaskStore(path)));

/** Runs `work` on a plain connection to the file, as another program (or a damaged disk) would. */
function withRawConnection<Result>(path: string, work: (db: Database.Database) => Result): Result {
  const db = new Database(path);
  try {
    return work(db);
  } finally {
    db.close();
  }
}

describe('openSqliteTaskStore', () => {
  let dir: string;
  let path: string;
  const opened: TaskStore[] = [];

  function open(options?: SqliteTaskStoreOptions, at = path): TaskStore {
    const store = openSqliteTaskStore(at, options);
    opened.push(store);
    return store;
  }

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'colony-tasks-'));
    path = join(dir, 'state', 'colony.db');
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("brings a store of the fifth version up with its rows: people's messages, requests and their numbers as they were", async () => {
    mkdirSync(join(dir, 'state'));
    withRawConnection(path, (db) => {
      migrateSchemaPart(db, path, { name: 'tasks', migrations: TASK_TABLE_SCHEMA.migrations.slice(0, 5) });
      db.prepare('INSERT INTO inbox (seq, run_id, recipient_task_id, text, created_at) VALUES (4, ?, ?, ?, 100)').run(RUN_ID, 'task-root', 'Focus on the parser.');
      db.prepare("INSERT INTO run_requests (seq, run_id, kind, workers, reason, requested_at) VALUES (7, ?, 'workers', 3, 'busy', 110)").run(RUN_ID);
      db.prepare("INSERT INTO run_requests (seq, run_id, kind, task_id, reason, requested_at) VALUES (9, ?, 'stop', 'task-w', 'wrong way', 120)").run(RUN_ID);
    });
    const store = open();
    expect(await store.runRequests(RUN_ID, 0)).toEqual([
      { seq: 7, runId: RUN_ID, kind: 'workers', workers: 3, reason: 'busy', requestedAt: 110 },
      { seq: 9, runId: RUN_ID, kind: 'stop', taskId: 'task-w', reason: 'wrong way', requestedAt: 120 },
    ]);
    expect((await store.requestGreen(RUN_ID, 'now', 130)).seq).toBe(10);
    expect(await store.personMessages(RUN_ID, 0)).toMatchObject([{ seq: 4, text: 'Focus on the parser.', sender: 'person' }]);
    withRawConnection(path, (db) => {
      expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'run_requests'").pluck().all()).toEqual(['run_requests_by_run']);
      expect(() => db.prepare("INSERT INTO run_requests (run_id, kind, workers, reason, requested_at) VALUES ('r', 'green', 2, 'x', 1)").run()).toThrow(/CHECK/);
    });
  });

  it('creates the file and its folders, in WAL mode, with strict versioned tables and their indexes', async () => {
    await open().createTask(rootTask(), 100);
    withRawConnection(path, (db) => {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.prepare('SELECT part, version FROM schema_versions').all()).toEqual([{ part: 'tasks', version: TASK_TABLE_SCHEMA.migrations.length }]);
      const tables = "SELECT name, strict FROM pragma_table_list WHERE name IN ('tasks', 'inbox', 'run_holds') ORDER BY name";
      expect(db.prepare(tables).all()).toEqual([
        { name: 'inbox', strict: 1 },
        { name: 'run_holds', strict: 1 },
        { name: 'tasks', strict: 1 },
      ]);
      const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").pluck();
      expect(indexes.all()).toEqual(
        expect.arrayContaining([
          'tasks_claimable',
          'tasks_by_parent',
          'tasks_paused',
          'inbox_one_handoff_per_task',
          'inbox_unread',
          'run_holds_by_run',
          'inbox_person_messages_by_run',
        ]),
      );
    });
  });

  it('writes through a connection that syncs every commit and waits for locks', async () => {
    const db = openSqliteStoreConnection(path, 1_234, TASK_TABLE_SCHEMA, 'task table');
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
      expect(db.pragma('busy_timeout', { simple: true })).toBe(1_234);
    } finally {
      db.close();
    }
  });

  it('syncs nothing when opened not durable, for measuring what durability costs', async () => {
    const db = openSqliteStoreConnection(path, 1_234, TASK_TABLE_SCHEMA, 'task table', false);
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('synchronous', { simple: true })).toBe(0); // OFF
    } finally {
      db.close();
    }
    const store = open({ durable: false });
    await store.createTask(rootTask(), 100);
    await store.close();
    expect((await open().getTask(ROOT))?.status).toBe('open');
  });

  it('finds the claim candidate by index seeks alone, however many tasks there are', async () => {
    await open().close();
    withRawConnection(path, (db) => {
      // Thousands of tasks in one transaction, so the statistics ANALYZE gathers are realistic.
      const insert = db.prepare(
        'INSERT INTO tasks (id, run_id, kind, title, body, status, attempt, created_at) ' +
          "VALUES (?, ?, ?, 'A task', 'Its brief.', ?, 0, 100)",
      );
      db.transaction(() => {
        for (let index = 0; index < 5_000; index += 1) {
          insert.run(`task-${index}`, `run-${index % 3}`, index % 7 === 0 ? 'planner' : 'worker', 'open');
        }
        db.prepare("UPDATE tasks SET status = 'done', closed_at = 200, handoff = '{}' WHERE seq % 2 = 0").run();
      })();
      db.exec('ANALYZE');
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN ${CLAIM_CANDIDATE_SQL}`)
        .all({ runId: RUN_ID, firstKind: 'worker', secondKind: 'planner', now: 1_000 })
        .map((row) => (row as { detail: string }).detail);
      const onTasks = plan.filter((detail) => / tasks /.test(`${detail} `));
      expect(onTasks).toHaveLength(4);
      for (const detail of onTasks) {
        expect(detail).toMatch(
          /^SEARCH tasks USING (COVERING )?INDEX tasks_claimable \(run_id=\? AND status=\? AND kind=\? AND paused_ancestors=\?/,
        );
      }
      expect(plan.join('\n')).not.toMatch(/TEMP B-TREE/);
    });
  });

  it('refuses a second delivery of one handoff at the schema level', async () => {
    const store = open();
    await store.createTask(rootTask(), 100);
    await store.createTask(childTask('worker-1', ROOT), 100);
    await store.claim(workerClaim('runner-a', 1_000, 1_000));
    await store.complete('worker-1', { holder: 'runner-a', attempt: 1 }, handoffOf('done', 'Done.'), 1_100);
    withRawConnection(path, (db) => {
      const insert = db.prepare(
        'INSERT INTO inbox (run_id, recipient_task_id, from_task_id, handoff, created_at) ' +
          "VALUES (?, ?, 'worker-1', ?, 1)",
      );
      const twice = JSON.stringify(handoffOf('done', 'Twice.'));
      expect(() => insert.run(RUN_ID, ROOT, twice)).toThrow(/UNIQUE constraint failed: inbox\.from_task_id/);
    });
    await store.sendMessage(RUN_ID, ROOT, 'First.', 1_200);
    await store.sendMessage(RUN_ID, ROOT, 'Second.', 1_300);
    const taken = (await store.takeInbox(ROOT)).map((message) => message.fromTaskId ?? message.text);
    expect(taken).toEqual(['worker-1', 'First.', 'Second.']);
  });

  it('names the task when a stored handoff is damaged, and loses no inbox message over it', async () => {
    const store = open();
    await store.createTask(rootTask(), 100);
    await store.createTask(childTask('worker-1', ROOT), 100);
    await store.claim(workerClaim('runner-a', 1_000, 1_000));
    await store.complete('worker-1', { holder: 'runner-a', attempt: 1 }, handoffOf('done', 'Done.'), 1_100);
    withRawConnection(path, (db) => {
      db.prepare("UPDATE tasks SET handoff = '{\"status\":\"finished\"}' WHERE id = 'worker-1'").run();
      db.prepare("UPDATE inbox SET handoff = 'not json' WHERE from_task_id = 'worker-1'").run();
    });
    await expect(store.getTask('worker-1')).rejects.toThrow(
      /handoff of task worker-1 in .*colony\.db is damaged: it is not a handoff/,
    );
    await expect(store.listTasks(RUN_ID)).rejects.toThrow(/task worker-1/);
    await expect(store.takeInbox(ROOT)).rejects.toThrow(
      /handoff of task worker-1 in inbox message \d+ of task root-of-run-1 .* is damaged: it is not JSON/,
    );
    expect(await store.unreadCount(ROOT)).toBe(1);
  });

  it('waits for another connection that holds the write lock, and fails cleanly past the timeout', async () => {
    const store = open({ busyTimeoutMs: 20 });
    await store.createTask(rootTask(), 100);
    await store.createTask(childTask('worker-1', ROOT), 100);
    const blocker = new Database(path);
    blocker.exec('BEGIN IMMEDIATE');
    try {
      await expect(store.claim(workerClaim('runner-a', 1_000, 1_000))).rejects.toThrow(
        /locked/,
      );
    } finally {
      blocker.exec('COMMIT');
      blocker.close();
    }
    expect((await store.getTask('worker-1'))?.status).toBe('open');
    expect((await store.claim(workerClaim('runner-a', 1_000, 1_000)))?.id).toBe(
      'worker-1',
    );
  });

  it('shares one file with the event log, opened in either order, and keeps both across reopening', async () => {
    const events = openSqliteEventStore(path);
    const tasks = open();
    const appended = events.append(toolStartedInput({ runId: RUN_ID, agentId: 'agent-a' }, 1));
    await events.flush();
    await tasks.createTask(rootTask(), 100);
    await tasks.sendMessage(RUN_ID, ROOT, 'Hello.', 200);
    await events.close();
    await tasks.close();
    const otherPath = join(dir, 'other.db');
    await open({}, otherPath).createTask(rootTask(), 100);
    const laterEvents = openSqliteEventStore(otherPath);
    laterEvents.append(toolStartedInput({ runId: RUN_ID, agentId: 'agent-a' }, 1));
    await laterEvents.close();

    const reopenedTasks = open();
    const reopenedEvents = openSqliteEventStore(path);
    try {
      expect(await reopenedEvents.read()).toEqual([{ ...appended, seq: 1 }]);
      expect((await reopenedTasks.getTask(ROOT))?.title).toBe(rootTask().title);
      expect((await reopenedTasks.takeInbox(ROOT)).map((message) => message.text)).toEqual(['Hello.']);
    } finally {
      await reopenedEvents.close();
    }
    withRawConnection(otherPath, (db) => {
      expect(db.prepare('SELECT part FROM schema_versions ORDER BY part').pluck().all()).toEqual(['events', 'tasks']);
      expect(db.prepare('SELECT COUNT(*) FROM events').pluck().get()).toBe(1);
    });
  });

  it('migrates a task table from before declared paths: its tasks read as declaring none, new ones keep theirs', async () => {
    const firstVersion = { name: TASK_TABLE_SCHEMA.name, migrations: TASK_TABLE_SCHEMA.migrations.slice(0, 1) };
    openSqliteStoreConnection(path, 1_000, firstVersion, 'task table').close();
    withRawConnection(path, (db) =>
      db
        .prepare(
          "INSERT INTO tasks (id, run_id, kind, title, body, status, attempt, created_at) VALUES ('old', ?, 'planner', 'Goal', 'goal', 'open', 0, 1)",
        )
        .run(RUN_ID),
    );
    const store = open();
    expect(await store.getTask('old')).toMatchObject({ id: 'old', paths: [] });
    await store.createTask(childTask('worker-1', 'old', 'worker', { paths: ['src/a.js'] }), 2);
    expect((await store.getTask('worker-1'))?.paths).toEqual(['src/a.js']);
    withRawConnection(path, (db) => {
      expect(db.prepare("SELECT version FROM schema_versions WHERE part = 'tasks'").pluck().get()).toBe(TASK_TABLE_SCHEMA.migrations.length);
      db.prepare("UPDATE tasks SET paths = 'not json' WHERE id = 'worker-1'").run();
    });
    await expect(store.getTask('worker-1')).rejects.toThrow(/paths of task worker-1 .* are damaged/);
  });

  it('migrates a task table from before run holds: its messages are listed by run, and no run is held', async () => {
    const secondVersion = { name: TASK_TABLE_SCHEMA.name, migrations: TASK_TABLE_SCHEMA.migrations.slice(0, 2) };
    openSqliteStoreConnection(path, 1_000, secondVersion, 'task table').close();
    withRawConnection(path, (db) => {
      db.prepare("INSERT INTO tasks (id, run_id, kind, title, body, status, attempt, created_at) VALUES (?, ?, 'planner', 'Goal', 'goal', 'open', 0, 1)").run(ROOT, RUN_ID);
      db.prepare("INSERT INTO inbox (run_id, recipient_task_id, text, created_at) VALUES (?, ?, 'Left before the upgrade.', 2)").run(RUN_ID, ROOT);
    });
    const store = open();
    expect((await store.personMessages(RUN_ID, 0)).map((message) => message.text)).toEqual(['Left before the upgrade.']);
    expect(await store.runAndon(RUN_ID)).toBeNull();
    expect(await store.claim(workerClaim('runner-a', 3, 1_000))).toBeNull();
    expect((await store.claim({ runId: RUN_ID, holder: 'runner-a', kinds: ['planner'], now: 3, leaseMs: 1_000 }))?.id).toBe(ROOT);
  });

  it('migrates a task table from before acceptance commands: its tasks have none, new ones keep theirs', async () => {
    const secondVersion = { name: TASK_TABLE_SCHEMA.name, migrations: TASK_TABLE_SCHEMA.migrations.slice(0, 2) };
    openSqliteStoreConnection(path, 1_000, secondVersion, 'task table').close();
    withRawConnection(path, (db) =>
      db
        .prepare(
          "INSERT INTO tasks (id, run_id, kind, title, body, status, attempt, created_at, paths) VALUES ('old', ?, 'planner', 'Goal', 'goal', 'open', 0, 1, '[\"src/\"]')",
        )
        .run(RUN_ID),
    );
    const store = open();
    expect(await store.getTask('old')).toMatchObject({ id: 'old', paths: ['src/'], acceptance: [] });
    await store.createTask(childTask('worker-1', 'old', 'worker', { acceptance: ['node --test'] }), 2);
    expect((await store.getTask('worker-1'))?.acceptance).toEqual(['node --test']);
    withRawConnection(path, (db) => {
      expect(db.prepare("SELECT version FROM schema_versions WHERE part = 'tasks'").pluck().get()).toBe(TASK_TABLE_SCHEMA.migrations.length);
      db.prepare("UPDATE tasks SET acceptance = '[1]' WHERE id = 'worker-1'").run();
    });
    await expect(store.getTask('worker-1')).rejects.toThrow(/acceptance commands of task worker-1 .* are damaged: they are not a list of strings/);
  });

  it('migrates a task table from before run requests: the run has none, and takes new ones', async () => {
    const fourthVersion = { name: TASK_TABLE_SCHEMA.name, migrations: TASK_TABLE_SCHEMA.migrations.slice(0, 4) };
    openSqliteStoreConnection(path, 1_000, fourthVersion, 'task table').close();
    withRawConnection(path, (db) => {
      db.prepare("INSERT INTO tasks (id, run_id, kind, title, body, status, attempt, created_at) VALUES (?, ?, 'planner', 'Goal', 'goal', 'open', 0, 1)").run(ROOT, RUN_ID);
    });
    const store = open();
    expect(await store.runRequests(RUN_ID, 0)).toEqual([]);
    const request = await store.requestWorkers(RUN_ID, 2, 'fewer', 2);
    expect(await store.runRequests(RUN_ID, 0)).toEqual([request]);
    withRawConnection(path, (db) => {
      // The table keeps each kind's own value: a stop without its task is refused.
      expect(() => db.prepare("INSERT INTO run_requests (run_id, kind, reason, requested_at) VALUES (?, 'stop', 'no task', 3)").run(RUN_ID)).toThrow(/CHECK constraint failed/);
    });
  });

  it('keeps what was written across closing and reopening', async () => {
    const store = open();
    await store.createTask(rootTask(), 100);
    await store.createTask(childTask('worker-1', ROOT), 110);
    const claimed = await store.claim(workerClaim('runner-a', 1_000, 5_000));
    await store.close();
    const reopened = open();
    expect(await reopened.getTask('worker-1')).toEqual(claimed);
    expect(await reopened.claim(workerClaim('runner-b', 2_000, 5_000))).toBeNull();
    expect((await reopened.complete('worker-1', { holder: 'runner-a', attempt: 1 }, handoffOf('done', 'Done.'), 3_000)).ok).toBe(true);
  });

  it('opens read-only: a view of an existing task table that refuses changes', async () => {
    const writer = open();
    await writer.createTask(rootTask(), 100);
    const reader = open({ readOnly: true });
    expect((await reader.listTasks(RUN_ID)).map((task) => task.id)).toEqual([ROOT]);
    await writer.createTask(childTask('worker-1', ROOT), 110);
    expect((await reader.getTask('worker-1'))?.status).toBe('open');
    await expect(reader.claim(workerClaim('r', 1, 1))).rejects.toThrow(/read-only/);
    await expect(reader.sendMessage(RUN_ID, ROOT, 'Hi', 1)).rejects.toThrow(/read-only/);
    await expect(reader.takeInbox(ROOT)).rejects.toThrow(/read-only/);
    expect((await writer.getTask('worker-1'))?.status).toBe('open');
  });

  it('refuses to open read-only what holds no task table, creating nothing', async () => {
    expect(() => open({ readOnly: true })).toThrow(/colony\.db does not exist, so there is no task table to read/);
    const events = openSqliteEventStore(path);
    await events.close();
    expect(() => open({ readOnly: true })).toThrow(/colony\.db holds no task table yet .*Open it for writing once/);
    withRawConnection(path, (db) => {
      expect(db.prepare('SELECT part FROM schema_versions').pluck().all()).toEqual(['events']);
    });
  });

  it('refuses a file that is not SQLite, another program’s database and a newer schema', async () => {
    const notes = join(dir, 'notes.db');
    const garbage = 'These are my notes, not a database.\n'.repeat(200);
    writeFileSync(notes, garbage);
    expect(() => open({}, notes)).toThrow(/notes\.db is not a SQLite database, so it cannot hold colony's task table/);
    expect(() => open({ readOnly: true }, notes)).toThrow(/notes\.db is not a SQLite database/);
    expect(readFileSync(notes, 'utf8')).toBe(garbage);
    const app = join(dir, 'app.db');
    withRawConnection(app, (db) => db.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY)'));
    expect(() => open({}, app)).toThrow(/colony did not create \(it has a table "customers"/);
    await open().close();
    withRawConnection(path, (db) => db.prepare("UPDATE schema_versions SET version = 9 WHERE part = 'tasks'").run());
    const known = new RegExp(`version 9, newer than the version ${TASK_TABLE_SCHEMA.migrations.length} this colony knows`);
    expect(() => open()).toThrow(known);
    expect(() => open({ readOnly: true })).toThrow(known);
  });
});

interface RunnerReport {
  readonly holder: string;
  readonly completed: string[];
  readonly refusals: string[];
}

describe('claiming from several processes at once', () => {
  const processCount = 6;
  const taskCount = 300;

  it('hands every task to exactly one process and delivers each handoff once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'colony-tasks-'));
    const path = join(dir, 'colony.db');
    const startPath = join(dir, 'start');
    const store = openSqliteTaskStore(path);
    await store.createTask(rootTask(), 100);
    for (let index = 0; index < taskCount; index += 1) {
      await store.createTask(childTask(`worker-${index}`, ROOT), 100 + index);
    }
    const runners = Array.from({ length: processCount }, (_, index) => {
      const holder = `runner-${index}`;
      const script = join(import.meta.dirname, '..', 'testing', 'claim-and-complete.ts');
      const child = spawn(process.execPath, ['--import', 'tsx', script], {
        cwd: join(import.meta.dirname, '../../..'),
        env: { ...process.env, STORE_PATH: path, RUN_ID, HOLDER: holder, START_PATH: startPath },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const nextLine = async (): Promise<string> => {
        const line = await lines.next();
        if (line.done === true) throw new Error(`${holder} ended before it reported`);
        return line.value;
      };
      return { child, exited: once(child, 'exit'), nextLine };
    });
    try {
      for (const runner of runners) expect(await runner.nextLine()).toBe('ready');
      writeFileSync(startPath, '');
      const reports: RunnerReport[] = [];
      for (const runner of runners) {
        reports.push(JSON.parse(await runner.nextLine()) as RunnerReport);
        expect((await runner.exited)[0]).toBe(0);
      }

      expect(reports.flatMap((report) => report.refusals)).toEqual([]);
      const completedBy = new Map<string, string[]>();
      for (const report of reports) {
        for (const id of report.completed) completedBy.set(id, [...(completedBy.get(id) ?? []), report.holder]);
      }
      expect(reports.reduce((sum, report) => sum + report.completed.length, 0)).toBe(taskCount);
      expect(completedBy.size).toBe(taskCount);
      const shares = reports.map((report) => report.completed.length);
      const working = shares.filter((share) => share > 0).length;
      expect(working, `tasks completed per process: ${shares.join(', ')}`).toBeGreaterThan(1);

      const workers = (await store.listTasks(RUN_ID)).filter((task) => task.kind === 'worker');
      expect(workers).toHaveLength(taskCount);
      for (const task of workers) {
        expect(completedBy.get(task.id), task.id).toEqual([task.leaseHolder]);
        expect(task).toMatchObject({ status: 'done', attempt: 1, leaseExpiresAt: null });
        expect(task.handoff?.summary).toBe(`Completed by ${task.leaseHolder}.`);
      }
      const delivered = await store.deliveredHandoffs(RUN_ID);
      expect(delivered).toHaveLength(taskCount);
      expect(new Set(delivered.map((message) => message.fromTaskId))).toEqual(new Set(completedBy.keys()));
      expect(await store.takeInbox(ROOT)).toHaveLength(taskCount);
      expect((await store.getTask(ROOT))?.status).toBe('open');
    } finally {
      for (const runner of runners) runner.child.kill();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
    // Six processes take turns at one file, each commit synced to disk: slow disks need room.
  }, 120_000);
});
