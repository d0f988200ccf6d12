import { z } from 'zod';
import type { ToolCall } from '../../model/messages.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';

/**
 * The worker tools as the sim calls them: names and JSON arguments exactly as the harness
 * defines them. The sim reads its own earlier calls back through these schemas, so a
 * malformed call of its own never counts as progress.
 */

const handoffInputSchema = z.object({
  status: z.enum(['done', 'partial', 'blocked', 'failed']),
  summary: z.string(),
  evidence: z.string().optional(),
  notes: z.array(z.string()).optional(),
  concerns: z.array(z.string()).optional(),
  deviations: z.array(z.string()).optional(),
  findings: z.array(z.string()).optional(),
  feedback: z.array(z.string()).optional(),
  follow_ups: z.array(z.string()).optional(),
});

const workerCallSchema = z.discriminatedUnion('name', [
  z.object({ name: z.literal(TOOL_NAMES.readFile), input: z.object({ path: z.string() }) }),
  z.object({ name: z.literal(TOOL_NAMES.writeFile), input: z.object({ path: z.string(), content: z.string() }) }),
  z.object({
    name: z.literal(TOOL_NAMES.editFile),
    input: z.object({
      path: z.string(),
      old_string: z.string(),
      new_string: z.string(),
      replace_all: z.boolean().optional(),
    }),
  }),
  z.object({ name: z.literal(TOOL_NAMES.listDir), input: z.object({ path: z.string() }) }),
  z.object({ name: z.literal(TOOL_NAMES.search), input: z.object({ pattern: z.string(), path: z.string().optional(), glob: z.string().optional() }) }),
  z.object({
    name: z.literal(TOOL_NAMES.runCommand),
    input: z.object({ command: z.string(), timeout_seconds: z.number().optional() }),
  }),
  z.object({ name: z.literal(TOOL_NAMES.mergeToMain), input: z.object({ message: z.string() }) }),
  z.object({ name: z.literal(TOOL_NAMES.submitHandoff), input: handoffInputSchema }),
  z.object({ name: z.literal(TOOL_NAMES.writeScratchpad), input: z.object({ content: z.string() }) }),
]);

export type WorkerCall = z.infer<typeof workerCallSchema>;
export type WorkerToolName = WorkerCall['name'];
export type HandoffInput = z.infer<typeof handoffInputSchema>;

/** The fields each tool cannot do without, in the order the sim drops them for a malformed call. */
export const REQUIRED_FIELDS: Readonly<Record<WorkerToolName, readonly string[]>> = {
  read_file: ['path'],
  write_file: ['path', 'content'],
  edit_file: ['path', 'old_string', 'new_string'],
  list_dir: ['path'],
  search: ['pattern'],
  run_command: ['command'],
  merge_to_main: ['message'],
  submit_handoff: ['status', 'summary'],
  write_scratchpad: ['content'],
};

/** Reads a tool call back as a well-formed worker call, or null when it was malformed. */
export function readWorkerCall(call: ToolCall): WorkerCall | null {
  let input: unknown;
  try {
    input = JSON.parse(call.input);
  } catch {
    return null;
  }
  const parsed = workerCallSchema.safeParse({ name: call.name, input });
  return parsed.success ? parsed.data : null;
}

/** The tool name and JSON text of a call the sim means to make. */
export function encodeWorkerCall(call: WorkerCall): { name: string; input: string } {
  return { name: call.name, input: JSON.stringify(call.input) };
}

/** What a call works on, so repeated failures of the same step can be counted. */
export function stepKeyOf(call: WorkerCall): string {
  switch (call.name) {
    case TOOL_NAMES.readFile:
    case TOOL_NAMES.writeFile:
    case TOOL_NAMES.editFile:
    case TOOL_NAMES.listDir:
      return `${call.name} ${call.input.path}`;
    case TOOL_NAMES.search:
      return `search ${call.input.pattern}`;
    case TOOL_NAMES.runCommand:
      return `run_command ${call.input.command}`;
    case TOOL_NAMES.mergeToMain:
    case TOOL_NAMES.submitHandoff:
    case TOOL_NAMES.writeScratchpad:
      return call.name;
  }
}
