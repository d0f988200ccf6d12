import { readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { describeFileError, errorCode } from './file-errors.js';
import type { Tool, ToolResult } from './tool.js';
import { resolveWorkspacePath } from './workspace-paths.js';
import type { WorkspaceRoot } from './workspace-paths.js';

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
    name: 'list_dir',
    description,
    parameters: listDirParameters,
    execute: (input) => listDir(workspace, input),
  };
}

async function listDir(workspace: WorkspaceRoot, input: ListDirInput): Promise<ToolResult> {
  const resolved = await resolveWorkspacePath(workspace, input.path ?? '.');
  if (!resolved.ok) return resolved;
  const { display, real } = resolved.path;
  let entries: Dirent[];
  try {
    const info = await stat(real);
    if (!info.isDirectory()) return { ok: false, error: `${display} is a file, not a directory; use read_file to read it` };
    entries = await readdir(real, { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      return { ok: false, error: `directory does not exist: ${display}; use list_dir on a parent directory to see what is there` };
    }
    return { ok: false, error: describeFileError(error, 'list', display) };
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
