import { z } from 'zod';
import { handoffSchema } from './handoff.js';

/**
 * Every event colony records, as one discriminated union on `type`. Names are
 * noun.past-tense-verb. A payload only ever gains optional fields within a version; a change
 * that breaks readers bumps EVENT_VERSION.
 */
export const EVENT_VERSION = 1;

const usageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative(),
});

const toolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The arguments exactly as the model sent them: possibly not JSON at all. */
  input: z.string(),
});

const bodies = [
  z.object({
    type: z.literal('run.started'),
    data: z.object({ mode: z.string(), repo: z.string(), model: z.string(), title: z.string() }),
  }),
  z.object({
    type: z.literal('run.ended'),
    data: z.object({ status: z.string(), durationMs: z.number() }),
  }),
  z.object({
    type: z.literal('agent.started'),
    data: z.object({
      role: z.enum(['worker', 'planner']),
      taskId: z.string(),
      title: z.string(),
      model: z.string(),
      systemPrompt: z.string(),
      task: z.string(),
      tools: z.array(z.string()),
    }),
  }),
  z.object({
    type: z.literal('agent.ended'),
    data: z.object({ status: z.string(), steps: z.number().int(), reason: z.string() }),
  }),
  z.object({
    type: z.literal('agent.failed'),
    data: z.object({ steps: z.number().int(), reason: z.string(), lastToolCall: z.string().nullable() }),
  }),
  z.object({
    type: z.literal('agent.nudged'),
    data: z.object({ step: z.number().int(), message: z.string() }),
  }),
  z.object({
    type: z.literal('model.requested'),
    data: z.object({ step: z.number().int(), model: z.string(), messages: z.number().int(), chars: z.number().int() }),
  }),
  z.object({
    type: z.literal('model.responded'),
    data: z.object({
      step: z.number().int(),
      text: z.string(),
      toolCalls: z.array(toolCallSchema),
      finishReason: z.string(),
      usage: usageSchema,
      costUsd: z.number().nullable(),
      durationMs: z.number(),
      attempts: z.number().int(),
    }),
  }),
  z.object({
    type: z.literal('model.retried'),
    data: z.object({
      step: z.number().int(),
      attempt: z.number().int(),
      kind: z.string(),
      message: z.string(),
      status: z.number().int().nullable(),
      delayMs: z.number(),
    }),
  }),
  z.object({
    type: z.literal('model.failed'),
    data: z.object({ step: z.number().int(), kind: z.string(), message: z.string(), attempts: z.number().int() }),
  }),
  z.object({
    type: z.literal('tool.started'),
    data: z.object({ step: z.number().int(), callId: z.string(), name: z.string(), input: z.string() }),
  }),
  z.object({
    type: z.literal('tool.ended'),
    data: z.object({
      step: z.number().int(),
      callId: z.string(),
      name: z.string(),
      ok: z.boolean(),
      output: z.string(),
      durationMs: z.number(),
    }),
  }),
  z.object({
    type: z.literal('workspace.created'),
    data: z.object({ path: z.string(), branch: z.string(), baseCommit: z.string(), durationMs: z.number() }),
  }),
  z.object({
    type: z.literal('workspace.removed'),
    data: z.object({ path: z.string(), kept: z.boolean() }),
  }),
  z.object({
    type: z.literal('merge.attempted'),
    data: z.object({ branch: z.string(), mainBefore: z.string(), attempt: z.number().int() }),
  }),
  z.object({
    type: z.literal('merge.landed'),
    data: z.object({
      commit: z.string(),
      mainBefore: z.string(),
      attempts: z.number().int(),
      files: z.array(z.string()),
      durationMs: z.number(),
    }),
  }),
  z.object({
    type: z.literal('merge.conflicted'),
    data: z.object({ files: z.array(z.string()), mainBefore: z.string() }),
  }),
  z.object({
    type: z.literal('handoff.submitted'),
    data: z.object({ taskId: z.string(), handoff: handoffSchema }),
  }),
] as const;

/** What a caller hands to the store: the type and its payload. */
export const eventBodySchema = z.discriminatedUnion('type', bodies);
export type EventBody = z.infer<typeof eventBodySchema>;
export type EventType = EventBody['type'];

/** The fields every stored event carries besides its body. */
export interface EventEnvelope {
  /** Position in the log, assigned by the store; strictly increasing. */
  readonly seq: number;
  readonly v: number;
  /** Unique and sortable by creation time. */
  readonly id: string;
  readonly runId: string;
  /** The agent the event is about, or "system" for run-level events. */
  readonly agentId: string;
  /** Milliseconds since the Unix epoch. */
  readonly ts: number;
}

export type ColonyEvent = EventEnvelope & EventBody;

/** The payload type of one event type. */
export type EventData<T extends EventType> = Extract<EventBody, { type: T }>['data'];

export const EVENT_TYPES: readonly EventType[] = bodies.map((body) => body.shape.type.value);
