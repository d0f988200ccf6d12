import { z } from 'zod';
import type { Message, ToolCall } from '../model/messages.js';
import { isSummaryMessage } from './reading/compaction-protocol.js';

/**
 * A conversation as the sim reads it, compacted or not: the first user message (the task or
 * the brief, always kept), the state carried in the latest summary, and the messages that
 * follow. The sim's summaries end with a fenced `sim-state` block holding that state as JSON;
 * everything before the summary is gone, so the readers start from it.
 */
export interface ConversationParts {
  readonly system: string;
  readonly firstUser: string;
  /** The `sim-state` JSON of the latest summary; null when there is no summary or it holds none the sim can read. */
  readonly carried: Readonly<Record<string, unknown>> | null;
  /** Whether a summary stands in for earlier turns, readable or not. */
  readonly compacted: boolean;
  /** The messages after the first user message, or after the latest summary (its unfinished turn first). */
  readonly rest: readonly Message[];
}

const STATE_BLOCK = /```sim-state\n([^\n]*)\n```/;

const toolCallSchema = z.object({ id: z.string(), name: z.string(), input: z.string() });
const toolResultSchema = z.object({ callId: z.string(), toolName: z.string(), content: z.string(), isError: z.boolean() });
const unfinishedSchema = z.object({ calls: z.array(toolCallSchema), results: z.array(toolResultSchema) });

/**
 * The last answer of a summarised stretch when the stretch ends before all its results: it is
 * carried as it is, calls and the results that were there, and put back in front of the
 * recent turns, so it is read exactly as it was.
 */
export type UnfinishedTurn = z.infer<typeof unfinishedSchema>;

export function splitConversation(messages: readonly Message[]): ConversationParts {
  const system = messages.find((message) => message.role === 'system');
  const firstUserIndex = messages.findIndex((message) => message.role === 'user');
  const firstUser = messages[firstUserIndex];
  let summaryIndex = -1;
  messages.forEach((message, index) => {
    if (index > firstUserIndex && firstUserIndex !== -1 && isSummaryMessage(message)) summaryIndex = index;
  });
  const base = { system: system?.role === 'system' ? system.content : '', firstUser: firstUser?.role === 'user' ? firstUser.content : '' };
  if (summaryIndex === -1) {
    const rest = messages.filter((message, index) => index !== firstUserIndex && message.role !== 'system');
    return { ...base, carried: null, compacted: false, rest };
  }
  const summary = messages[summaryIndex];
  const carried = summary?.role === 'user' ? readStateBlock(summary.content) : null;
  const unfinished = unfinishedSchema.safeParse(carried?.unfinished);
  const resumed = unfinished.success ? unfinishedMessages(unfinished.data) : [];
  return { ...base, carried, compacted: true, rest: [...resumed, ...messages.slice(summaryIndex + 1)] };
}

function readStateBlock(content: string): Record<string, unknown> | null {
  const json = STATE_BLOCK.exec(content)?.[1];
  if (json === undefined) return null;
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function unfinishedMessages(turn: UnfinishedTurn): Message[] {
  return [
    { role: 'assistant', text: '', toolCalls: turn.calls },
    ...turn.results.map((result): Message => ({ role: 'tool', ...result })),
  ];
}

/**
 * Splits what a compaction request summarises (the request without its prompt) into what the
 * sim folds into its state and, when the last answer's results are not all there yet, that
 * answer with the results that are.
 */
export function splitUnfinishedTurn(messages: readonly Message[]): { folded: readonly Message[]; unfinished: UnfinishedTurn | null } {
  const lastAnswer = messages.findLastIndex((message) => message.role === 'assistant');
  const answer = messages[lastAnswer];
  if (answer?.role !== 'assistant' || answer.toolCalls.length === 0) return { folded: messages, unfinished: null };
  const after = messages.slice(lastAnswer + 1);
  if (!after.every((message) => message.role === 'tool')) return { folded: messages, unfinished: null };
  const results = after.flatMap((message) =>
    message.role === 'tool' ? [{ callId: message.callId, toolName: message.toolName, content: message.content, isError: message.isError }] : [],
  );
  const answered = new Set(results.map((result) => result.callId));
  if (answer.toolCalls.every((call) => answered.has(call.id))) return { folded: messages, unfinished: null };
  const calls: ToolCall[] = answer.toolCalls.map((call) => ({ id: call.id, name: call.name, input: call.input }));
  return { folded: messages.slice(0, lastAnswer), unfinished: { calls, results } };
}

/** The summary's text: what a person reads, then the state the sim goes on from. */
export function summaryText(lines: readonly string[], state: Readonly<Record<string, unknown>>): string {
  return `${lines.join('\n')}\n\n\`\`\`sim-state\n${JSON.stringify(state)}\n\`\`\``;
}

/** Tool results by call id (the first result of each call counts). */
export function resultsById(messages: readonly Message[]): Map<string, { content: string; isError: boolean }> {
  const results = new Map<string, { content: string; isError: boolean }>();
  for (const message of messages) {
    if (message.role === 'tool' && !results.has(message.callId)) results.set(message.callId, { content: message.content, isError: message.isError });
  }
  return results;
}
