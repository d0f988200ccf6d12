import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

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
  const bytes = randomBytes(12);
  let random = '';
  for (const byte of bytes) random += ALPHABET[byte % 32];
  return time + random;
}

/** A short id with a readable prefix, for runs, agents and tasks: `agent-3f9k2m8q`. */
export function newShortId(prefix: string): string {
  const bytes = randomBytes(8);
  let random = '';
  for (const byte of bytes) random += ALPHABET[byte % 32];
  return `${prefix}-${random}`;
}
