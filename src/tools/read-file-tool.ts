import { createReadStream, readFileSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { z } from 'zod';
import { describeFileError, errorCode } from './file-errors.js';
import { selectLines } from './select-lines.js';
import type { LineSelection } from './select-lines.js';
import type { Tool, ToolResult } from './tool.js';
import { resolveWorkspacePath } from './workspace-paths.js';
import type { WorkspaceRoot } from './workspace-paths.js';

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
    name: 'read_file',
    description,
    parameters: readFileParameters,
    execute: (input) => readFile(workspace, input),
  };
}

async function readFile(workspace: WorkspaceRoot, input: ReadFileInput): Promise<ToolResult> {
  const resolved = await resolveWorkspacePath(workspace, input.path);
  if (!resolved.ok) return resolved;
  const { display, real } = resolved.path;
  const problem = await checkReadableTextFile(real, display);
  if (problem !== null) return { ok: false, error: problem };

  const offset = input.offset ?? 1;
  const limit = input.limit ?? DEFAULT_READ_LINE_LIMIT;
  let selection: LineSelection;
  try {
    selection = await selectLines(createReadStream(real), offset, limit, MAX_READ_BYTES);
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

/** Null when `real` is a regular file that looks like text, otherwise what is wrong with it. */
async function checkReadableTextFile(real: string, display: string): Promise<string | null> {
  try {
    const info = await stat(real);
    if (info.isDirectory()) return `${display} is a directory, not a file; use list_dir to see its entries`;
    if (!info.isFile()) return `${display} is not a regular file (it is a device, socket or pipe); read_file reads only regular files`;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      return `file does not exist: ${display}; use list_dir to see which files are there`;
    }
    return describeFileError(error, 'read', display);
  }
  try {
    if (await startsWithBinary(real)) {
      return `${display} looks like a binary file (it has NUL bytes in its first 8 KB); read_file shows only text, so inspect it with run_command (for example \`file\` or \`xxd | head\`) instead`;
    }
  } catch (error) {
    return describeFileError(error, 'read', display);
  }
  return null;
}

/** True when the first bytes of the file hold a NUL, the cheap test git and grep use too. */
export async function startsWithBinary(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead).includes(0);
  } finally {
    await handle.close();
  }
}
