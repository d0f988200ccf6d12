import { z } from 'zod';
import type { ToolCall } from '../../model/messages.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';

/**
 * The planner tools as the sim calls them: names and JSON arguments exactly as the planner
 * protocol (docs/architecture/planner.md) defines them. The sim reads its own earlier calls
 * back through these schemas, so a call that did not parse never counts as progress.
 */

const finishInputSchema = z.object({
  summary: z.string(),
  status: z.enum(['done', 'partial', 'blocked', 'failed']).optional(),
  notes: z.array(z.string()).optional(),
  concerns: z.array(z.string()).optional(),
  findings: z.array(z.string()).optional(),
  feedback: z.array(z.string()).optional(),
  follow_ups: z.array(z.string()).optional(),
});

const plannerCallSchema = z.discriminatedUnion('name', [
  z.object({
    name: z.literal(TOOL_NAMES.createTask),
    input: z.object({
      title: z.string(),
      brief: z.string(),
      retry_of: z.string().optional(),
      paths: z.array(z.string()).optional(),
      acceptance: z.array(z.string()).optional(),
    }),
  }),
  z.object({ name: z.literal(TOOL_NAMES.delegate), input: z.object({ title: z.string(), scope: z.string(), brief: z.string() }) }),
  z.object({ name: z.literal(TOOL_NAMES.writeScratchpad), input: z.object({ content: z.string() }) }),
  z.object({
    name: z.literal(TOOL_NAMES.runCommand),
    input: z.object({ command: z.string(), timeout_seconds: z.number().optional() }),
  }),
  z.object({ name: z.literal(TOOL_NAMES.finish), input: finishInputSchema }),
  z.object({
    name: z.literal(TOOL_NAMES.readFile),
    input: z.object({ path: z.string(), offset: z.number().int().min(1).optional(), limit: z.number().int().min(1).optional() }),
  }),
]);

export type PlannerCall = z.infer<typeof plannerCallSchema>;
export type FinishInput = z.infer<typeof finishInputSchema>;

/** Reads a tool call back as a well-formed planner call, or null when it is not one the sim makes. */
export function readPlannerCall(call: ToolCall): PlannerCall | null {
  let input: unknown;
  try {
    input = JSON.parse(call.input);
  } catch {
    return null;
  }
  const parsed = plannerCallSchema.safeParse({ name: call.name, input });
  return parsed.success ? parsed.data : null;
}

/** The tool name and JSON text of a call the sim means to make. */
export function encodePlannerCall(call: PlannerCall): { name: string; input: string } {
  return { name: call.name, input: JSON.stringify(call.input) };
}
