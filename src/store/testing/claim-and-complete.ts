import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { openSqliteTaskStore } from '../sqlite/sqlite-task-store.js';
import { handoffOf } from './task-store-fixtures.js';

/**
 * A runner in its own process, for the test of claiming under contention: it claims the worker
 * tasks of RUN_ID from the store at STORE_PATH as HOLDER and completes each a moment later,
 * until none is left, then prints what it completed as one JSON line. It prints `ready` once the store is
 * open and starts claiming only when a file exists at START_PATH, so every process starts at
 * the same moment.
 */
function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`Set ${name} in the environment.`);
  return value;
}

const holder = setting('HOLDER');
const runId = setting('RUN_ID');
const startPath = setting('START_PATH');
const store = openSqliteTaskStore(setting('STORE_PATH'), { busyTimeoutMs: 60_000 });
console.log('ready');
while (!existsSync(startPath)) await sleep(2);

const completed: string[] = [];
const refusals: string[] = [];
for (;;) {
  const task = await store.claim({ runId, holder, kinds: ['worker'], now: Date.now(), leaseMs: 600_000 });
  if (task === null) break;
  // A real runner works between claim and complete; that pause is when other runners get the
  // write lock. Without it one process, never leaving the lock idle, takes nearly everything.
  await sleep(1);
  const result = await store.complete(task.id, { holder, attempt: task.attempt }, handoffOf('done', `Completed by ${holder}.`), Date.now());
  if (result.ok) completed.push(task.id);
  else refusals.push(result.error);
}
await store.close();
console.log(JSON.stringify({ holder, completed, refusals }));
