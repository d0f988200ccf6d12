import { constants, readFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { describeFileError } from './file-errors.js';
import { openWorkspaceFile, sharedFileProblem } from './open-workspace-file.js';
import { startsWithBinary } from './read-file-tool.js';
import type { Tool, ToolResult } from './tool.js';
import { resolveWorkspacePath } from './workspace-paths.js';
import type { WorkspaceRoot } from './workspace-paths.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

const description = readFileSync(new URL('./descriptions/edit-file.md', import.meta.url), 'utf8');

export const editFileParameters = z.object({
  path: z.string().describe('The file to edit, relative to the workspace root.'),
  old_string: z
    .string()
    .describe('The exact text to replace, including whitespace and indentation. Must occur once unless replace_all is true.'),
  new_string: z.string().describe('The text to put in its place.'),
  replace_all: z
    .boolean()
    .optional()
    .describe('Replace every occurrence of old_string instead of requiring exactly one. Defaults to false.'),
});
export type EditFileInput = z.infer<typeof editFileParameters>;

/** `edit_file`: replaces an exact string in a file, once or everywhere. */
export function createEditFileTool(workspace: WorkspaceRoot): Tool<EditFileInput> {
  return {
    name: TOOL_NAMES.editFile,
    description,
    parameters: editFileParameters,
    execute: (input) => editFile(workspace, input),
  };
}

async function editFile(workspace: WorkspaceRoot, input: EditFileInput): Promise<ToolResult> {
  if (input.old_string === '') {
    return { ok: false, error: 'old_string is empty; give the exact text to replace, or use write_file to write a whole file' };
  }
  if (input.old_string === input.new_string) {
    return { ok: false, error: 'old_string and new_string are the same, so the edit would change nothing' };
  }
  const resolved = await resolveWorkspacePath(workspace, input.path);
  if (!resolved.ok) return resolved;
  const { display } = resolved.path;
  const opened = await openWorkspaceFile(resolved.path, constants.O_RDWR, 'edit');
  if (!opened.ok) {
    if (opened.code === 'ENOENT') {
      return { ok: false, error: `file does not exist: ${display}; use write_file to create it, or list_dir to find the right path` };
    }
    if (opened.code === 'EISDIR') return { ok: false, error: `${display} is a directory, not a file` };
    if (opened.code === 'ENXIO') return { ok: false, error: `${display} is not a regular file; edit_file edits only regular files` };
    return opened;
  }
  const { handle } = opened;
  try {
    return await editOpenFile(handle, display, input);
  } finally {
    await handle.close();
  }
}

async function editOpenFile(handle: FileHandle, display: string, input: EditFileInput): Promise<ToolResult> {
  let text: string;
  try {
    const info = await handle.stat();
    if (info.isDirectory()) return { ok: false, error: `${display} is a directory, not a file` };
    if (!info.isFile()) return { ok: false, error: `${display} is not a regular file; edit_file edits only regular files` };
    const shared = sharedFileProblem(display, info.nlink);
    if (shared !== null) return { ok: false, error: shared };
    if (await startsWithBinary(handle)) {
      return { ok: false, error: `${display} looks like a binary file (it has NUL bytes in its first 8 KB); edit_file edits only text` };
    }
    text = await handle.readFile('utf8');
  } catch (error) {
    return { ok: false, error: describeFileError(error, 'read', display) };
  }

  const occurrences = countOccurrences(text, input.old_string);
  if (occurrences === 0) return { ok: false, error: notFoundError(display, text, input.old_string) };
  const replaceAll = input.replace_all === true;
  if (occurrences > 1 && !replaceAll) {
    return {
      ok: false,
      error: `old_string occurs ${occurrences} times in ${display}; include more surrounding lines so it matches exactly once, or set replace_all to true to replace every occurrence`,
    };
  }
  // split/join and slicing, not String.replace, so `$&` and friends in new_string stay literal.
  const edited = replaceAll
    ? text.split(input.old_string).join(input.new_string)
    : spliceFirst(text, input.old_string, input.new_string);
  try {
    await handle.truncate(0);
    await handle.write(edited, 0, 'utf8');
  } catch (error) {
    return { ok: false, error: describeFileError(error, 'write', display) };
  }
  const replacements = replaceAll ? occurrences : 1;
  return { ok: true, output: `edited ${display}: ${replacements} replacement${replacements === 1 ? '' : 's'}` };
}

/** Non-overlapping occurrences, the ones a replace-all would change. */
function countOccurrences(text: string, search: string): number {
  let count = 0;
  for (let index = text.indexOf(search); index !== -1; index = text.indexOf(search, index + search.length)) count += 1;
  return count;
}

function spliceFirst(text: string, search: string, replacement: string): string {
  const index = text.indexOf(search);
  return text.slice(0, index) + replacement + text.slice(index + search.length);
}

function notFoundError(display: string, text: string, search: string): string {
  const base = `old_string was not found in ${display}; read_file it and copy the text exactly, including whitespace and indentation`;
  if (text.includes('\r\n') && !search.includes('\r\n') && text.includes(search.replace(/\n/g, '\r\n'))) {
    return `${base} (the file uses CRLF line endings: write them as \\r\\n in old_string)`;
  }
  return base;
}
