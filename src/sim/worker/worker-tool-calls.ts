import { z } from 'zod';
import type { ToolCall } from '../../model/messages.js';

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
  z.object({ name: z.literal('read_file'), input: z.object({ path: z.string() }) }),
  z.object({ name: z.literal('write_file'), input: z.object({ path: z.string(), content: z.string() }) }),
  z.object({
    name: z.literal('edit_file'),
    input: z.object({
      path: z.string(),
      old_string: z.string(),
      new_string: z.string(),
      replace_all: z.boolean().optional(),
    }),
  }),
  z.object({ name: z.literal('list_dir'), input: z.object({ path: z.string() }) }),
  z.object({ name: z.literal('search'), input: z.object({ pattern: z.string(), path: z.string().optional() }) }),
  z.object({
    name: z.literal('run_command'),
    input: z.object({ command: z.string(), timeout_seconds: z.number().optional() }),
  }),
  z.object({ name: z.literal('merge_to_main'), input: z.object({ message: z.string() }) }),
  z.object({ name: z.literal('submit_handoff'), input: handoffInputSchema }),
  z.object({ name: z.literal('write_scratchpad'), input: z.object({ content: z.string() }) }),
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
    case 'read_file':
    case 'write_file':
    case 'edit_file':
    case 'list_dir':
      return `${call.name} ${call.input.path}`;
    case 'search':
      return `search ${call.input.pattern}`;
    case 'run_command':
      return `run_command ${call.input.command}`;
    case 'merge_to_main':
    case 'submit_handoff':
    case 'write_scratchpad':
      return call.name;
  }
}
