import type { ColonyEvent, EventData, RecordedEvent } from '../../events/event-types.js';
import type { EventInput } from '../events/event-store.js';

/** Who an example event is about. */
export interface EventSubject {
  readonly runId: string;
  readonly agentId: string;
  readonly ts?: number;
}

export function toolStartedInput(subject: EventSubject, step: number, input = '{"path":"src/index.ts"}'): EventInput {
  return { ...subject, type: 'tool.started', data: { step, callId: `call-${step}`, name: 'read_file', input } };
}

export function toolEndedInput(subject: EventSubject, step: number, output: string): EventInput {
  return {
    ...subject,
    type: 'tool.ended',
    data: { step, callId: `call-${step}`, name: 'read_file', ok: true, output, durationMs: 12.5 },
  };
}

export function modelRespondedInput(subject: EventSubject, step: number, text: string): EventInput {
  const data: EventData<'model.responded'> = {
    step,
    text,
    toolCalls: [{ id: `call-${step}`, name: 'read_file', input: '{"path":"src/index.ts"}' }],
    finishReason: 'tool-calls',
    usage: { inputTokens: 1200 + step, outputTokens: 80, cachedInputTokens: 1024 },
    costUsd: 0.0031,
    durationMs: 840,
    attempts: 1,
  };
  return { ...subject, type: 'model.responded', data };
}

export function handoffSubmittedInput(subject: EventSubject, taskId: string): EventInput {
  return {
    ...subject,
    type: 'handoff.submitted',
    data: {
      taskId,
      handoff: {
        status: 'partial',
        summary: 'Parser done; the printer still drops comments.',
        commits: ['3f9c2e1', 'a07b5d4'],
        evidence: 'npm test: 41 passed, 2 failed',
        notes: ['Kept the old tokenizer: the new one broke string escapes.'],
        concerns: ['printer.ts has no tests for nested blocks'],
        deviations: [],
        findings: ['The spec contradicts itself on trailing commas; followed section 4.'],
        feedback: ['The task was clear.'],
        followUps: ['Preserve comments in the printer', 'Add nested block tests'],
        synthetic: false,
      },
    },
  };
}

/** An event read back from a log as its writer had it from `append`: everything but its seq. */
export function withoutSeq(event: ColonyEvent): RecordedEvent {
  const { seq: _seq, ...recorded } = event;
  return recorded as RecordedEvent;
}
