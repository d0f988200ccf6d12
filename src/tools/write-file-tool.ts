import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { describeFileError } from './file-errors.js';
import { openWorkspaceFileForWriting, sharedFileProblem } from './open-workspace-file.js';
import type { Tool, ToolResult } from './tool.js';
import { resolveWorkspacePath } from './workspace-paths.js';
import type { WorkspaceRoot } from './workspace-paths.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

const description = readFileSync(new URL('./descriptions/write-file.md', import.meta.url), 'utf8');

export const writeFileParameters = z.object({
  path: z.string().describe('The file to write, relative to the workspace root. Missing parent directories are created.'),
  content: z.string().describe('The complete new contents of the file.'),
});
export type WriteFileInput = z.infer<typeof writeFileParameters>;

/** `write_file`: creates or replaces a file, making its parent directories. */
export function createWriteFileTool(workspace: WorkspaceRoot): Tool<WriteFileInput> {
  return {
    name: TOOL_NAMES.writeFile,
    description,
    parameters: writeFileParameters,
    execute: (input) => writeFile(workspace, input),
  };
}

async function writeFile(workspace: WorkspaceRoot, input: WriteFileInput): Promise<ToolResult> {
  const resolved = await resolveWorkspacePath(workspace, input.path);
  if (!resolved.ok) return resolved;
  const { display, real, realRoot } = resolved.path;
  if (real === realRoot) return { ok: false, error: `${display} is a directory; give the path of a file to write` };
  try {
    await mkdir(dirname(real), { recursive: true });
  } catch (error) {
    return { ok: false, error: describeFileError(error, 'write', display) };
  }
  const opened = await openWorkspaceFileForWriting(resolved.path);
  if (!opened.ok) {
    if (opened.code === 'EISDIR') return { ok: false, error: `${display} is a directory; give the path of a file to write` };
    // A pipe with no reader: opening it for writing would otherwise block.
    if (opened.code === 'ENXIO') return { ok: false, error: notRegularFile(display) };
    return opened;
  }
  const { handle } = opened;
  try {
    const info = await handle.stat();
    if (info.isDirectory()) return { ok: false, error: `${display} is a directory; give the path of a file to write` };
    // A pipe or device could block or reach beyond the workspace's files.
    if (!info.isFile()) return { ok: false, error: notRegularFile(display) };
    const shared = sharedFileProblem(display, info.nlink);
    if (shared !== null) return { ok: false, error: shared };
    await handle.truncate(0);
    await handle.write(input.content, 0, 'utf8');
  } catch (error) {
    return { ok: false, error: describeFileError(error, 'write', display) };
  } finally {
    await handle.close();
  }
  return { ok: true, output: `wrote ${Buffer.byteLength(input.content, 'utf8')} bytes to ${display}` };
}

function notRegularFile(display: string): string {
  return `${display} is not a regular file (it is a device, socket or pipe); write_file writes only regular files`;
}
