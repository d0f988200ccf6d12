import type { z } from 'zod';

/**
 * The outcome of one tool call. Expected failures are data: `error` says what went wrong and
 * what to do instead, in words a model (and a person) can act on.
 */
export type ToolResult =
  | {
      readonly ok: true;
      readonly output: string;
      /** Set by a tool that ends the agent's loop (submit_handoff). */
      readonly endsAgent?: boolean;
      /** Milliseconds of CPU the commands the call ran used, where a cgroup counted them (run_command). */
      readonly cpuMs?: number;
    }
  | { readonly ok: false; readonly error: string };

export interface ToolContext {
  readonly signal: AbortSignal;
  readonly callId: string;
}

/**
 * A tool: a plain object made by a factory bound to its workspace. `execute` receives input
 * already validated against `parameters` and must not throw for expected failures.
 */
export interface Tool<Input = unknown> {
  readonly name: string;
  readonly description: string;
  readonly parameters: z.ZodType<Input>;
  execute(input: Input, context: ToolContext): Promise<ToolResult>;
}

/** A tool of any input type, as the agent loop holds them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of tools has mixed inputs; each validates its own
export type AnyTool = Tool<any>;

/**
 * A recorded call's raw arguments read back through a tool's schema (for an agent rebuilt
 * after a restart), or null when they do not parse, which a call that succeeded never had.
 */
export function readRecordedInput<Input>(parameters: z.ZodType<Input>, input: string): Input | null {
  let json: unknown;
  try {
    json = JSON.parse(input);
  } catch {
    return null;
  }
  const parsed = parameters.safeParse(json);
  return parsed.success ? parsed.data : null;
}
