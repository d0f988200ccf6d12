import { constants, readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { isDirectory } from '../workspace/files/path-exists.js';
import { describeFileError, errorCode } from './file-errors.js';
import { openWorkspaceFile } from './open-workspace-file.js';
import type { Tool, ToolResult } from './tool.js';
import { resolveWorkspacePath } from './workspace-paths.js';
import type { WorkspaceRoot } from './workspace-paths.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

/** The most entries one listing shows. */
export const MAX_LIST_ENTRIES = 1_000;

const description = readFileSync(new URL('./descriptions/list-dir.md', import.meta.url), 'utf8');

export const listDirParameters = z.object({
  path: z
    .string()
    .optional()
    .describe('The directory to list, relative to the workspace root. Defaults to "." (the root).'),
});
export type ListDirInput = z.infer<typeof listDirParameters>;

/** `list_dir`: the entries of one directory, sorted, directories marked with a trailing `/`. */
export function createListDirTool(workspace: WorkspaceRoot): Tool<ListDirInput> {
  return {
    name: TOOL_NAMES.listDir,
    description,
    parameters: listDirParameters,
    execute: (input) => listDir(workspace, input),
  };
}

async function listDir(workspace: WorkspaceRoot, input: ListDirInput): Promise<ToolResult> {
  const resolved = await resolveWorkspacePath(workspace, input.path ?? '.');
  if (!resolved.ok) return resolved;
  const { display, real } = resolved.path;
  const missing = `directory does not exist: ${display}; use list_dir on a parent directory to see what is there`;
  const opened = await openWorkspaceFile(resolved.path, constants.O_RDONLY, 'list');
  if (!opened.ok) return { ok: false, error: opened.code === 'ENOENT' ? missing : opened.error };
  let entries: Dirent[];
  try {
    const info = await opened.handle.stat();
    if (!info.isDirectory()) return { ok: false, error: `${display} is a file, not a directory; use read_file to read it` };
    // The directory that was opened (and checked to be inside), not whatever the path names now.
    entries = await readdir(await openedDirectoryPath(opened.handle.fd, real), { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return { ok: false, error: missing };
    return { ok: false, error: describeFileError(error, 'list', display) };
  } finally {
    await opened.handle.close();
  }
  const names = await Promise.all(
    entries.filter((entry) => entry.name !== '.git').map((entry) => entryName(real, entry)),
  );
  if (names.length === 0) return { ok: true, output: '[empty directory]' };
  names.sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
  const shown = names.slice(0, MAX_LIST_ENTRIES);
  const hidden = names.length - shown.length;
  const note =
    hidden > 0
      ? `\n[... ${hidden} more entries not shown, ${names.length} in total; list a subdirectory or use search with a glob to narrow down]`
      : '';
  return { ok: true, output: shown.join('\n') + note };
}

/** `/proc/self/fd/<fd>`, which names the open directory itself, where the system has it; `fallback` elsewhere. */
async function openedDirectoryPath(fd: number, fallback: string): Promise<string> {
  const path = `/proc/self/fd/${fd}`;
  return (await isDirectory(path)) ? path : fallback;
}

/** The entry's name, with a trailing `/` for a directory or a symbolic link to one. */
async function entryName(directory: string, entry: Dirent): Promise<string> {
  if (entry.isDirectory()) return `${entry.name}/`;
  if (!entry.isSymbolicLink()) return entry.name;
  try {
    return (await stat(join(directory, entry.name))).isDirectory() ? `${entry.name}/` : entry.name;
  } catch {
    return entry.name;
  }
}
