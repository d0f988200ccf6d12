import type { WorkerCall } from './worker/worker-tool-calls.js';
import { REQUIRED_FIELDS } from './worker/worker-tool-calls.js';

/** The ways a sim call goes wrong, the mistakes real models make with tool calls. */
export const MALFORMED_KINDS = ['truncated-json', 'missing-field', 'wrong-type', 'unknown-tool'] as const;
export type MalformedKind = (typeof MALFORMED_KINDS)[number];

/** `roll` in [0, 1) picks the kind. */
export function malformedKindFor(roll: number): MalformedKind {
  return MALFORMED_KINDS[Math.min(MALFORMED_KINDS.length - 1, Math.floor(roll * MALFORMED_KINDS.length))] ?? 'truncated-json';
}

/** The intended call spoiled in one way; the harness should reject it and the sim then re-issues the real one. */
export function malformCall(call: WorkerCall, kind: MalformedKind, toolNames: readonly string[]): { name: string; input: string } {
  const input: Record<string, unknown> = { ...call.input };
  const field = REQUIRED_FIELDS[call.name][0] ?? 'path';
  switch (kind) {
    case 'truncated-json': {
      // Any proper prefix of a JSON object is invalid JSON: the closing brace is missing.
      const text = JSON.stringify(input);
      return { name: call.name, input: text.slice(0, Math.max(1, Math.floor(text.length / 2))) };
    }
    case 'missing-field':
      delete input[field];
      return { name: call.name, input: JSON.stringify(input) };
    case 'wrong-type':
      input[field] = [input[field]];
      return { name: call.name, input: JSON.stringify(input) };
    case 'unknown-tool':
      return { name: unknownToolName(call.name, toolNames), input: JSON.stringify(input) };
  }
}

/** A near miss of a real tool name, like `writefile` for `write_file`, that no tool answers to. */
function unknownToolName(name: string, toolNames: readonly string[]): string {
  const candidates = [name.replace(/_/g, ''), name.replace(/_(\w)/g, (_match, letter: string) => letter.toUpperCase()), `${name}_tool`];
  return candidates.find((candidate) => candidate !== name && !toolNames.includes(candidate)) ?? `${name}_v2_tool`;
}
