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
  let body: string;
  try {
    if (!statSync(path).isFile()) return { ok: false, error: `the ${noun} ${path} is not a file: pass a Markdown file` };
    body = readFileSync(path, 'utf8');
  } catch {
    return { ok: false, error: `the ${noun} file ${path} does not exist: pass the path of a Markdown file describing the ${noun}` };
  }
  if (body.trim() === '') return { ok: false, error: `the ${noun} file ${path} is empty: describe the ${noun} in it` };
  const spec = parseColonySpec(body);
  if (!spec.ok) return { ok: false, error: `the ${noun} file ${path} has a colony-spec block that is not valid: ${spec.error}` };
  const heading = /^#\s+(.+)$/m.exec(body);
  return { ok: true, title: heading?.[1]?.trim() ?? basename(path), body };
}
