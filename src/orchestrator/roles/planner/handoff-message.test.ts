import { describe, expect, it } from 'vitest';
import { handoffSchema, isFalseClaim, type AcceptanceVerdict, type Handoff } from '../../../events/handoff.js';
import { readHandoffMessage } from '../../../sim/reading/handoff-message.js';
import { earlierAttemptsSection, handoffMessage } from './handoff-message.js';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';

function handoff(status: Handoff['status'], acceptance: AcceptanceVerdict | null): Handoff {
  return handoffSchema.parse({ status, summary: 'Built padLeft; `node --test` passes.', commits: [COMMIT], acceptance });
}

const failedVerdict: AcceptanceVerdict = {
  commit: COMMIT,
  passed: false,
  skipped: null,
  results: [
    { command: 'node --test', passed: false, exitCode: 1, timedOut: false, outputTail: '✖ padLeft("a", 3, "-") returns "--a" (0.7ms)\nsummary: 1 failing\n\nℹ fail 1' },
    { command: 'sleep 999', passed: false, exitCode: null, timedOut: true, outputTail: '' },
    { command: 'npm run lint', passed: true, exitCode: 0, timedOut: false, outputTail: 'all clean' },
  ],
};

describe('the handoff message', () => {
  it('says, right under the status, that a done claim failed its checks, with each command and the failing output indented', () => {
    const message = handoffMessage('task-1', 'Build pad', handoff('done', failedVerdict));
    expect(message.split('\n').slice(0, 10)).toEqual([
      'Handoff from task task-1 "Build pad"',
      'status: done',
      'acceptance: claimed done, checks failed at 0123456789ab',
      '- `node --test`: failed with exit code 1',
      '    ✖ padLeft("a", 3, "-") returns "--a" (0.7ms)',
      '    summary: 1 failing',
      '    ℹ fail 1',
      '- `sleep 999`: failed: timed out',
      '- `npm run lint`: passed',
      'summary: Built padLeft; `node --test` passes.',
    ]);
    expect(isFalseClaim(handoff('done', failedVerdict))).toBe(true);
    // Planners read it back as text: the output's own "summary:" line is not taken for the handoff's.
    expect(readHandoffMessage(message)).toMatchObject({
      status: 'done',
      summary: 'Built padLeft; `node --test` passes.',
      acceptance: { verdict: 'failed', commit: '0123456789ab' },
    });
  });

  it('says which failures of a failed check main already showed before the merge, and which are new', () => {
    const [first] = failedVerdict.results;
    if (first === undefined) throw new Error('no result');
    const marked = (newFailures: string[]): AcceptanceVerdict => ({ ...failedVerdict, results: [{ ...first, alreadyFailing: ['✖ padLeft("a", 3, "-") returns "--a"'], newFailures }] });
    expect(handoffMessage('task-1', 'Build pad', handoff('done', marked([]))).split('\n')[4]).toBe(
      "  1 of its failures already failed on main before this merge (not this task's; the green loop's fix-up owns it); none is new.",
    );
    expect(handoffMessage('task-1', 'Build pad', handoff('done', marked(['✖ caseTitle']))).split('\n')[4]).toBe(
      "  1 of its failures already failed on main before this merge (not this task's; the green loop's fix-up owns it); new: ✖ caseTitle.",
    );
    expect(readHandoffMessage(handoffMessage('task-1', 'Build pad', handoff('done', marked([]))))).toMatchObject({ status: 'done', summary: 'Built padLeft; `node --test` passes.' });
    // A done whose failed check failed only as main already did is not a false claim; one with a new failure is.
    expect(isFalseClaim(handoff('done', marked([])))).toBe(false);
    expect(isFalseClaim(handoff('done', marked(['✖ caseTitle'])))).toBe(true);
    // The sim reads colony's words as they are written: only main's failures, a new one, or another command failing too.
    const reading = (verdict: AcceptanceVerdict) => readHandoffMessage(handoffMessage('task-1', 'Build pad', handoff('done', verdict)))?.acceptance?.onlyMainsFailures;
    const withTimeout: AcceptanceVerdict = { ...failedVerdict, results: [...marked([]).results, ...failedVerdict.results.slice(1)] };
    expect([reading(marked([])), reading(marked(['✖ caseTitle'])), reading(withTimeout)]).toEqual([true, false, false]);
  });

  it('does not call a partial handoff whose checks failed a false claim', () => {
    const partial = handoff('partial', failedVerdict);
    expect(handoffMessage('task-1', 'Build pad', partial).split('\n')[2]).toBe('acceptance: checks failed at 0123456789ab');
    expect(isFalseClaim(partial)).toBe(false);
  });

  it('says the checks passed, or why they did not run, and says nothing for a task without checks', () => {
    const passed = handoff('done', { commit: COMMIT, passed: true, skipped: null, results: [{ command: 'node --test', passed: true, exitCode: 0, timedOut: false, outputTail: 'ℹ pass 3' }] });
    expect(handoffMessage('task-1', 'Build pad', passed).split('\n').slice(1, 4)).toEqual([
      'status: done',
      'acceptance: passed at 0123456789ab',
      '- `node --test`: passed',
    ]);
    const nothing = handoff('done', { commit: null, passed: false, skipped: 'nothing landed', results: [] });
    expect(handoffMessage('task-1', 'Build pad', nothing).split('\n')[2]).toBe('acceptance: not run: nothing landed');
    expect(isFalseClaim(nothing)).toBe(false);
    expect(readHandoffMessage(handoffMessage('task-1', 'Build pad', nothing))?.acceptance?.verdict).toBe('not-run');
    const none = handoffMessage('task-1', 'Build pad', handoff('done', null));
    expect(none).not.toContain('acceptance');
    expect(readHandoffMessage(none)?.acceptance).toBeNull();
  });

  it("tells a retry's worker how the earlier attempt's checks went", () => {
    const section = earlierAttemptsSection([{ taskId: 'task-1', handoffs: [handoff('done', failedVerdict)] }]);
    expect(section).toContain('### Task task-1\nstatus: done\nacceptance: claimed done, checks failed at 0123456789ab\n- `node --test`: failed with exit code 1');
  });
});
