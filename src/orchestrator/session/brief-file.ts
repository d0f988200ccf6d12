import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { parseColonySpec } from '../../spec/colony-spec.js';

export type BriefFile = { readonly ok: true; readonly title: string; readonly body: string } | { readonly ok: false; readonly error: string };

/**
 * Reads a Markdown brief (a task for `colony work`, a goal for `colony run`): it must be a
 * non-empty file, and a colony-spec block in it must be valid (every field of it is optional).
 * The title is its first heading, or the file's name.
 */
export function readBriefFile(path: string, noun: 'task' | 'goal'): BriefFile {
  let bytes: Buffer;
  try {
    if (!statSync(path).isFile()) return { ok: false, error: `the ${noun} ${path} is not a file: pass a Markdown file` };
    bytes = readFileSync(path);
  } catch {
    return { ok: false, error: `the ${noun} file ${path} does not exist: pass the path of a Markdown file describing the ${noun}` };
  }
  // What the models read must be text: a binary file (an executable, an archive, an image) given by mistake is refused.
  const body = textOf(bytes);
  if (body === null) {
    return { ok: false, error: `the ${noun} file ${path} is not text (it is not UTF-8, or it holds NUL bytes): pass a Markdown file describing the ${noun}` };
  }
  if (body.trim() === '') return { ok: false, error: `the ${noun} file ${path} is empty: describe the ${noun} in it` };
  const spec = parseColonySpec(body);
  if (!spec.ok) return { ok: false, error: `the ${noun} file ${path} has a colony-spec block that is not valid: ${spec.error}` };
  const heading = /^#\s+(.+)$/m.exec(body);
  return { ok: true, title: heading?.[1]?.trim() ?? basename(path), body };
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
