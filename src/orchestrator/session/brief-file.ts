import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { parseColonySpec } from '../../spec/colony-spec.js';

export type BriefFile = { readonly ok: true; readonly title: string; readonly body: string } | { readonly ok: false; readonly error: string };

/**
 * The largest brief read unless told otherwise: far more than any goal a person writes (a
 * generated goal of 600 modules is under 1 MB), small enough that a file given by mistake (a
 * log, a database dump) is refused before it is read into memory and into the store.
 */
export const DEFAULT_MAX_BRIEF_BYTES = 16 * 1024 * 1024;

/** How large a brief may be, and the flag that raises the cap (named in the refusal), if there is one. */
export interface BriefCap {
  readonly maxBytes: number;
  readonly raiseWith?: string | undefined;
}

const DEFAULT_CAP: BriefCap = { maxBytes: DEFAULT_MAX_BRIEF_BYTES };

/**
 * Reads a Markdown brief (a task for `colony work`, a goal for `colony run`): it must be a
 * non-empty file no larger than the cap, and a colony-spec block in it must be valid (every
 * field of it is optional). The title is its first heading, or the file's name.
 */
export function readBriefFile(path: string, noun: 'task' | 'goal', cap: BriefCap = DEFAULT_CAP): BriefFile {
  let bytes: Buffer;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) return { ok: false, error: `the ${noun} ${path} is not a file: pass a Markdown file` };
    // Asked before reading: a file of gigabytes given by mistake is never read in.
    if (stats.size > cap.maxBytes) return { ok: false, error: tooLarge(`the ${noun} file ${path}`, stats.size, cap) };
    bytes = readFileSync(path);
  } catch {
    return { ok: false, error: `the ${noun} file ${path} does not exist: pass the path of a Markdown file describing the ${noun}` };
  }
  // What the models read must be text: a binary file (an executable, an archive, an image) given by mistake is refused.
  const body = textOf(bytes);
  if (body === null) {
    return { ok: false, error: `the ${noun} file ${path} is not text (it is not UTF-8, or it holds NUL bytes): pass a Markdown file describing the ${noun}` };
  }
  return briefOf(body, `the ${noun} file ${path}`, noun, basename(path));
}

/**
 * Reads a brief given as text (`colony run --goal "..."`), held to the rules of a file: not
 * empty, no larger than the cap, no NUL bytes, a valid colony-spec block if it has one. The
 * title is its first heading, or its first line.
 */
export function readBriefText(text: string, noun: 'task' | 'goal', cap: BriefCap = DEFAULT_CAP): BriefFile {
  const what = `the ${noun} given with --${noun}`;
  const size = Buffer.byteLength(text, 'utf8');
  if (size > cap.maxBytes) return { ok: false, error: tooLarge(what, size, cap) };
  if (text.includes('\0')) return { ok: false, error: `${what} holds a NUL byte: pass text` };
  const firstLine = text.trim().split('\n')[0]?.trim() ?? '';
  return briefOf(text, what, noun, firstLine.length > 80 ? `${firstLine.slice(0, 79)}…` : firstLine);
}

function briefOf(body: string, what: string, noun: 'task' | 'goal', fallbackTitle: string): BriefFile {
  if (body.trim() === '') return { ok: false, error: `${what} is empty: describe the ${noun} in it` };
  const spec = parseColonySpec(body);
  if (!spec.ok) return { ok: false, error: `${what} has a colony-spec block that is not valid: ${spec.error}` };
  const heading = /^#\s+(.+)$/m.exec(body);
  return { ok: true, title: heading?.[1]?.trim() ?? fallbackTitle, body };
}

/** `the goal file G.md is 20.0 MB, more than the 16.0 MB a goal may be: ...`. */
function tooLarge(what: string, size: number, cap: BriefCap): string {
  const raise = cap.raiseWith === undefined ? '' : `, or raise the cap with ${cap.raiseWith} ${suggestedCap(size)}`;
  return `${what} is ${sizeText(size)}, more than the ${sizeText(cap.maxBytes)} colony reads: check that it is the ${what.includes('file') ? 'file' : 'text'} you meant, shorten it${raise}`;
}

/** `16.0 MB`, `868.2 KB`, `512 bytes`. */
function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

/** The smallest whole number of megabytes that holds the size, for the hint. */
function suggestedCap(size: number): string {
  return `${Math.max(1, Math.ceil(size / (1024 * 1024)))}M`;
}

/** The bytes as UTF-8 text, or null when they are not (invalid UTF-8, or a NUL byte anywhere). */
function textOf(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
