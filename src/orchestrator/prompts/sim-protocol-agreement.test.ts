import { describe, expect, it } from 'vitest';
import { SHRUNK_OUTPUT_CHARS, shrinkOldToolOutputs } from '../../agent/context-size.js';
import { SUMMARY_OPENING as LOOP_SUMMARY_OPENING } from '../../agent/compaction.js';
import type { Message } from '../../model/messages.js';
import { isShrunkOutput, shrinkToolOutput } from '../../sim/reading/compaction-protocol.js';
import { COMPACTION_REQUEST_OPENING, SUMMARY_OPENING, EVIDENCE_FIRST_OPENING, REFLECTION_REMINDER_OPENING, SCRATCHPAD_REMINDER_OPENING, GREEN_FAILURES_HEADING, GREEN_FIXUP_OPENING, MAIN_FAILING_OPENING, NOT_LANDED_OPENING, OTHERS_TESTS_OPENING, RELEASE_REFUSED_OPENING, STRAY_NOTES_OPENING, WORKER_TASK_CONTEXT_HEADING } from '../../protocol/message-openings.js';
import { defaultPromptSet } from './prompt-set.js';

/**
 * The sim recognises colony's requests by their words, as a model reads them. These tie the
 * words the sim looks for to the ones colony sends, so rewording a prompt cannot quietly turn
 * the sim's handling off.
 */
describe("the sim's protocol and colony's own words", () => {
  const prompts = defaultPromptSet();

  it('opens the compaction request, the reminders and the evidence answer as the sim expects', () => {
    expect(prompts.text('compaction').startsWith(COMPACTION_REQUEST_OPENING)).toBe(true);
    expect(prompts.text('scratchpad-reminder').startsWith(SCRATCHPAD_REMINDER_OPENING)).toBe(true);
    expect(prompts.text('reflect-reminder').startsWith(REFLECTION_REMINDER_OPENING)).toBe(true);
    expect(prompts.text('evidence-reminder').startsWith(EVIDENCE_FIRST_OPENING)).toBe(true);
  });

  it("opens a worker's task with its brief, and a worker's notice of a red main with its own words", () => {
    expect(prompts.text('worker-task').startsWith(`{{BRIEF}}\n\n${WORKER_TASK_CONTEXT_HEADING}\n`)).toBe(true);
    expect(prompts.text('main-failing').startsWith(MAIN_FAILING_OPENING)).toBe(true);
    expect(prompts.text('unlanded-done').startsWith(NOT_LANDED_OPENING)).toBe(true);
    expect(prompts.text('stray-notes').startsWith(STRAY_NOTES_OPENING)).toBe(true);
    expect(prompts.text('others-tests').startsWith(OTHERS_TESTS_OPENING)).toBe(true);
    expect(OTHERS_TESTS_OPENING.startsWith(STRAY_NOTES_OPENING)).toBe(false);
  });

  it('writes a summary and a shrunk output the way the sim reads them', () => {
    expect(LOOP_SUMMARY_OPENING.startsWith(SUMMARY_OPENING)).toBe(true);
    const output = `${'first line of a long output\n'}${'x'.repeat(5_000)}\nlast line`;
    const messages: Message[] = [
      { role: 'assistant', text: '', toolCalls: [{ id: 'c1', name: 'run_command', input: '{}' }] },
      { role: 'tool', callId: 'c1', toolName: 'run_command', content: output, isError: false },
      { role: 'assistant', text: 'next', toolCalls: [] },
    ];
    expect(shrinkOldToolOutputs(messages, 1, SHRUNK_OUTPUT_CHARS)).toBe(1);
    const shrunk = messages[1]?.role === 'tool' ? messages[1].content : '';
    expect(isShrunkOutput(shrunk)).toBe(true);
    expect(shrunk).toBe(shrinkToolOutput(output));
  });

  it("opens a fix-up message and a refused finish as the sim expects, the failure lines right under their heading", () => {
    for (const [name, opening] of [['green-fixup', GREEN_FIXUP_OPENING], ['release-refused', RELEASE_REFUSED_OPENING]] as const) {
      const text = prompts.text(name);
      expect(text.startsWith(opening)).toBe(true);
      expect(text).toContain(`\n${GREEN_FAILURES_HEADING}\n{{FAILURES}}\n\n`);
    }
  });
});
