import { constants, readFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { describeFileError } from './file-errors.js';
import { openWorkspaceFile } from './open-workspace-file.js';
import { selectLines } from './select-lines.js';
import type { LineSelection } from './select-lines.js';
import type { Tool, ToolResult } from './tool.js';
import { resolveWorkspacePath } from './workspace-paths.js';
import type { WorkspaceRoot } from './workspace-paths.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

export const DEFAULT_READ_LINE_LIMIT = 2_000;
/** The most file text one call returns, whatever the line limit. */
export const MAX_READ_BYTES = 100 * 1024;
/** A NUL byte in this much of the start of a file marks it as binary. */
export const BINARY_SNIFF_BYTES = 8 * 1024;

const description = readFileSync(new URL('./descriptions/read-file.md', import.meta.url), 'utf8');

export const readFileParameters = z.object({
  path: z.string().describe('The file to read, relative to the workspace root.'),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('The 1-based number of the first line to read. Defaults to 1.'),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`The most lines to return. Defaults to ${DEFAULT_READ_LINE_LIMIT}.`),
});
export type ReadFileInput = z.infer<typeof readFileParameters>;

/** `read_file`: the raw text of a file, or a range of its lines, with a note when cut short. */
export function createReadFileTool(workspace: WorkspaceRoot): Tool<ReadFileInput> {
  return {
    name: TOOL_NAMES.readFile,
    description,
    parameters: readFileParameters,
    execute: (input) => readFile(workspace, input),
  };
}

async function readFile(workspace: WorkspaceRoot, input: ReadFileInput): Promise<ToolResult> {
  const resolved = await resolveWorkspacePath(workspace, input.path);
  if (!resolved.ok) return resolved;
  const { display } = resolved.path;
  const opened = await openWorkspaceFile(resolved.path, constants.O_RDONLY, 'read');
  if (!opened.ok) {
    if (opened.code === 'ENOENT') return { ok: false, error: `file does not exist: ${display}; use list_dir to see which files are there` };
    if (opened.code === 'ENXIO') return { ok: false, error: notRegularFile(display) };
    return opened;
  }
  const { handle } = opened;
  try {
    const problem = await checkReadableTextFile(handle, display);
    if (problem !== null) return { ok: false, error: problem };
    return await readLines(handle, display, input);
  } finally {
    await handle.close();
  }
}

async function readLines(handle: FileHandle, display: string, input: ReadFileInput): Promise<ToolResult> {
  const offset = input.offset ?? 1;
  const limit = input.limit ?? DEFAULT_READ_LINE_LIMIT;
  let selection: LineSelection;
  try {
    selection = await selectLines(handle.createReadStream({ start: 0, autoClose: false }), offset, limit, MAX_READ_BYTES);
  } catch (error) {
    return { ok: false, error: describeFileError(error, 'read', display) };
  }
  const { totalLines, lastLine, cutLine } = selection;
  if (totalLines === 0) return { ok: true, output: '[empty file]' };
  if (offset > totalLines) {
    return {
      ok: false,
      error: `offset ${offset} is past the end of ${display}, which has ${totalLines} lines; use an offset from 1 to ${totalLines}`,
    };
  }
  const text = selection.bytes.toString('utf8');
  const separator = text.endsWith('\n') ? '' : '\n';
  if (cutLine !== null) {
    const next = cutLine.number < totalLines ? `; call read_file with offset ${cutLine.number + 1} for the lines after it` : '';
    return {
      ok: true,
      output: `${text}${separator}[... truncated: line ${cutLine.number} is ${cutLine.bytes} bytes long, showing its first ${cutLine.shownBytes} bytes${next}]`,
    };
  }
  if (lastLine < totalLines) {
    return {
      ok: true,
      output: `${text}${separator}[... truncated: showing lines ${offset}-${lastLine} of ${totalLines}; call read_file with offset to see more]`,
    };
  }
  return { ok: true, output: text };
}

function notRegularFile(display: string): string {
  return `${display} is not a regular file (it is a device, socket or pipe); read_file reads only regular files`;
}

/** Null when the open file is a regular file that looks like text, otherwise what is wrong with it. */
async function checkReadableTextFile(handle: FileHandle, display: string): Promise<string | null> {
  try {
    const info = await handle.stat();
    if (info.isDirectory()) return `${display} is a directory, not a file; use list_dir to see its entries`;
    if (!info.isFile()) return notRegularFile(display);
    if (await startsWithBinary(handle)) {
      return `${display} looks like a binary file (it has NUL bytes in its first 8 KB); read_file shows only text, so inspect it with run_command (for example \`file\` or \`xxd | head\`) instead`;
    }
  } catch (error) {
    return describeFileError(error, 'read', display);
  }
  return null;
}

/** True when the first bytes of the file hold a NUL, the cheap test git and grep use too. */
export async function startsWithBinary(handle: FileHandle): Promise<boolean> {
  const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0);
  return buffer.subarray(0, bytesRead).includes(0);
}
