import { createHash } from 'node:crypto';

/** The last `max` characters of `text`, marked with a leading "…" when cut. */
export function tailOf(text: string, max: number): string {
  return text.length <= max ? text : `…${text.slice(text.length - max + 1)}`;
}

/** The first `max` characters of `text`, marked with a trailing "…" when cut. */
export function headOf(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Texts longer than this are grouped and compared by a digest, so a long input held per agent or per command costs little. */
const KEY_CHARS = 300;

/**
 * A key that is equal for equal texts and small for long ones: the text itself when short, else
 * its start and a sha256 of all of it.
 */
export function textKey(text: string): string {
  if (text.length <= KEY_CHARS) return text;
  return `${text.slice(0, 100)}\u0000${text.length}\u0000${createHash('sha256').update(text).digest('base64')}`;
}
