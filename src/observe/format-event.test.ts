import { describe, expect, it } from 'vitest';
import type { ColonyEvent, EventBody } from '../events/event-types.js';
import { describeEvent, formatEventLine } from './format-event.js';

const envelope = { seq: 1, v: 1, id: 'id', runId: 'run-1', agentId: 'worker-abc', ts: Date.UTC(2026, 10, 29, 14, 5, 6, 789) };

function event(body: EventBody): ColonyEvent {
  return { ...envelope, ...body } as ColonyEvent;
}

describe('formatEventLine', () => {
  it('shows the time of day, the agent and what happened', () => {
    const line = formatEventLine(
      event({ type: 'tool.ended', data: { step: 2, callId: 'c', name: 'run_command', ok: true, output: 'exit code: 1\n\nboom', durationMs: 1500 } }),
    );
    expect(line).toBe('14:05:06.789  worker-abc       run_command ok in 1.5s: exit code: 1');
  });

  it('summarises a tool call by its path or command, and flags malformed arguments', () => {
    expect(describeEvent(event({ type: 'tool.started', data: { step: 1, callId: 'c', name: 'read_file', input: '{"path":"src/a.js"}' } }))).toBe(
      'read_file src/a.js',
    );
    expect(describeEvent(event({ type: 'tool.started', data: { step: 1, callId: 'c', name: 'write_file', input: '{"path": "src/' } }))).toBe(
      'write_file (malformed arguments: {"path": "src/)',
    );
  });

  it('says a handoff colony wrote is synthetic', () => {
    const handoff = {
      status: 'failed' as const,
      summary: 'The worker ended without a handoff.',
      commits: [],
      evidence: '',
      notes: [],
      concerns: [],
      deviations: [],
      findings: [],
      feedback: [],
      followUps: [],
      synthetic: true,
    };
    expect(describeEvent(event({ type: 'handoff.submitted', data: { taskId: 't', handoff } }))).toBe(
      'handoff failed (synthetic): The worker ended without a handoff.',
    );
  });
});
