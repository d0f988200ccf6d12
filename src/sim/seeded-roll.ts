import { createHash } from 'node:crypto';

/**
 * A number in [0, 1) that depends only on its inputs. The sim keeps no state between calls,
 * so every random choice is a roll keyed by what the conversation shows: the seed, a stable
 * key (the task text, a module path), the assistant turn, and what the roll decides.
 */
export function seededRoll(seed: number, key: string, turn: number, purpose: string): number {
  const digest = createHash('sha256').update(JSON.stringify([seed, key, turn, purpose])).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}
