import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * Random bytes are drawn from a pool refilled a few hundred ids at a time: one system call per
 * id was a fifth of the cost of appending an event.
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomCharacters(count: number): string {
  if (poolOffset + count > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  let text = '';
  for (let index = 0; index < count; index += 1) text += ALPHABET[(pool[poolOffset + index] ?? 0) % 32];
  poolOffset += count;
  return text;
}

/**
 * A 22-character id that sorts by creation time: 10 characters of milliseconds, 12 random.
 * Readable in logs and unique across processes and machines without coordination.
 */
export function newId(now: number = Date.now()): string {
  let time = '';
  let rest = now;
  for (let index = 0; index < 10; index += 1) {
    time = ALPHABET[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  return time + randomCharacters(12);
}

/** A short id with a readable prefix, for runs, agents and tasks: `agent-3f9k2m8q`. */
export function newShortId(prefix: string): string {
  return `${prefix}-${randomCharacters(8)}`;
}
