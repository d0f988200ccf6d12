import { readFileSync } from 'node:fs';
import { mkdir, stat, writeFile as writeFileToDisk } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { describeFileError } from './file-errors.js';
import type { Tool, ToolResult } from './tool.js';
import { resolveWorkspacePath } from './workspace-paths.js';
import type { WorkspaceRoot } from './workspace-paths.js';

const description = readFileSync(new URL('./descriptions/write-file.md', import.meta.url), 'utf8');

export const writeFileParameters = z.object({
  path: z.string().describe('The file to write, relative to the workspace root. Missing parent directories are created.'),
  content: z.string().describe('The complete new contents of the file.'),
});
export type WriteFileInput = z.infer<typeof writeFileParameters>;

/** `write_file`: creates or replaces a file, making its parent directories. */
export function createWriteFileTool(workspace: WorkspaceRoot): Tool<WriteFileInput> {
  return {
    name: 'write_file',
    description,
    parameters: writeFileParameters,
    execute: (input) => writeFile(workspace, input),
  };
}

async function writeFile(workspace: WorkspaceRoot, input: WriteFileInput): Promise<ToolResult> {
  const resolved = await resolveWorkspacePath(workspace, input.path);
  if (!resolved.ok) return resolved;
  const { display, real, realRoot } = resolved.path;
  const existing = await kindOf(real);
  if (real === realRoot || existing === 'directory') {
    return { ok: false, error: `${display} is a directory; give the path of a file to write` };
  }
  // Opening a pipe or device for writing could block or reach beyond the workspace's files.
  if (existing === 'other') {
    return { ok: false, error: `${display} is not a regular file (it is a device, socket or pipe); write_file writes only regular files` };
  }
  try {
    await mkdir(dirname(real), { recursive: true });
    await writeFileToDisk(real, input.content, 'utf8');
  } catch (error) {
    return { ok: false, error: describeFileError(error, 'write', display) };
  }
  return { ok: true, output: `wrote ${Buffer.byteLength(input.content, 'utf8')} bytes to ${display}` };
}

async function kindOf(path: string): Promise<'missing' | 'file' | 'directory' | 'other'> {
  try {
    const info = await stat(path);
    return info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other';
  } catch {
    return 'missing';
  }
}
