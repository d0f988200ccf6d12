import { toolEndedInput } from './event-store-fixtures.js';
import { openSqliteEventStore } from '../sqlite/sqlite-event-store.js';

/**
 * A writer in its own process, for the crash tests: it appends events to the log at
 * STORE_PATH in batches of BATCH_SIZE and flushes each batch, forever, until it is killed. It
 * prints `first <seq>` for the first event it appends, then `flushed <seq>` each time a flush
 * has returned: everything up to that seq is durable. Each event's output names its own seq
 * and grows and shrinks from batch to batch, so transactions end at varied offsets in the WAL.
 */
function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`Set ${name} in the environment.`);
  return value;
}

const batchSize = Number(setting('BATCH_SIZE'));
const store = openSqliteEventStore(setting('STORE_PATH'));
const subject = { runId: 'run-crash', agentId: 'writer' };
console.log(`first ${(await store.lastSeq()) + 1}`);
for (let batch = 0; ; batch += 1) {
  const firstSeq = (await store.lastSeq()) + 1;
  const inputs = Array.from({ length: batchSize }, (_, index) => {
    const seq = firstSeq + index;
    return toolEndedInput(subject, seq, `event ${seq} `.padEnd(200 + ((batch * 397 + index * 131) % 1_800), '.'));
  });
  store.appendMany(inputs);
  await store.flush();
  console.log(`flushed ${await store.lastSeq()}`);
}
