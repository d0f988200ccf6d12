import { z } from 'zod';
import type { ToolCall } from '../model/messages.js';
import type { ToolSpec } from '../model/chat-model.js';
import type { AnyTool, ToolResult } from '../tools/tool.js';
import { errorMessage } from '../errors/error-message.js';

/**
 * How a call went wrong before its tool ever ran; data for the model, never an exception.
 * `cut-off`: the answer stopped at its output limit in the middle of the call (see `dispatchCutOffCall`).
 */
export type CallRejection = 'malformed-json' | 'unknown-tool' | 'invalid-arguments' | 'cut-off';

export type DispatchResult =
  | { readonly ran: true; readonly result: ToolResult }
  | { readonly ran: false; readonly rejection: CallRejection; readonly result: ToolResult & { ok: false } };

/** The tools as the model sees them: name, description and JSON Schema of the arguments. */
export function toolSpecs(tools: readonly AnyTool[]): ToolSpec[] {
  return tools.map((tool) => {
    const { $schema: _ignored, ...inputSchema } = z.toJSONSchema(tool.parameters, { io: 'input' }) as Record<
      string,
      unknown
    >;
    return { name: tool.name, description: tool.description, inputSchema };
  });
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(arguments)'}: ${issue.message}`)
    .join('; ');
}

/**
 * Parses, validates and runs one tool call. Every way the model can get a call wrong comes back
 * as an error result that says what was wrong and what to send instead. A tool that throws is a
 * bug in colony, but it still must not take the agent down: the model is told, the loop goes on.
 */
export async function dispatchToolCall(
  call: ToolCall,
  toolsByName: ReadonlyMap<string, AnyTool>,
  signal: AbortSignal,
): Promise<DispatchResult> {
  const tool = toolsByName.get(call.name);
  if (tool === undefined) {
    const names = [...toolsByName.keys()].join(', ');
    return reject('unknown-tool', `unknown tool "${call.name}". The tools you can call are: ${names}.`);
  }
  let input: unknown;
  try {
    input = call.input.trim() === '' ? {} : JSON.parse(call.input);
  } catch (error) {
    const reason = errorMessage(error);
    return reject(
      'malformed-json',
      `invalid arguments for ${call.name}: not valid JSON (${reason}). ` +
        'Send the call again with one JSON object matching the tool\'s parameters.',
    );
  }
  const parsed = tool.parameters.safeParse(input);
  if (!parsed.success) {
    return reject(
      'invalid-arguments',
      `invalid arguments for ${call.name}: ${describeIssues(parsed.error)}. ` +
        'Fix these fields and send the call again.',
    );
  }
  try {
    return { ran: true, result: await tool.execute(parsed.data, { signal, callId: call.id }) };
  } catch (error) {
    const reason = errorMessage(error);
    return { ran: true, result: { ok: false, error: `${call.name} failed unexpectedly: ${reason}` } };
  }
}

function reject(rejection: CallRejection, error: string): DispatchResult {
  return { ran: false, rejection, result: { ok: false, error } };
}
