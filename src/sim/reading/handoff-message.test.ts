import { describe, expect, it } from 'vitest';
import { notLandedPaths, readHandoffMessage } from './handoff-message.js';

const MESSAGE = [
  'Handoff from task t7 "Own src/collections/"',
  'status: partial',
  'summary: 10 of 12 modules landed;',
  'two did not.',
  'commits: a1, b2',
  'evidence: $ node --test',
  'exit code: 0',
  'notes:',
  '- not landed: src/collections/c3.js',
  '- not landed: src/collections/c4.js',
  '- a note that goes on',
  '  over two lines',
  'concerns:',
  '- c3 keeps failing',
  'follow-ups:',
  '- look at c3',
].join('\n');

describe('readHandoffMessage', () => {
  it('reads the header, status, multi-line summary and list sections', () => {
    expect(readHandoffMessage(MESSAGE)).toEqual({
      taskId: 't7',
      title: 'Own src/collections/',
      status: 'partial',
      synthetic: false,
      summary: '10 of 12 modules landed;\ntwo did not.',
      notes: ['not landed: src/collections/c3.js', 'not landed: src/collections/c4.js', 'a note that goes on\n  over two lines'],
      concerns: ['c3 keeps failing'],
      acceptance: null,
    });
  });

  it("reads colony's acceptance verdict under the status, with the lines below it, whatever the output holds", () => {
    const failed = [
      'Handoff from task t3 "Build pad"',
      'status: done',
      'acceptance: claimed done, checks failed at 1a2b3c4d5e6f',
      '- `node --test`: failed with exit code 1',
      '    ✖ padLeft("a", 3, "-") returns "--a" (0.8ms)',
      '    summary: not a field, only output',
      'summary: Built padLeft.',
      'commits: 1a2b3c4d5e6f',
    ].join('\n');
    expect(readHandoffMessage(failed)).toMatchObject({
      status: 'done',
      summary: 'Built padLeft.',
      acceptance: { verdict: 'failed', commit: '1a2b3c4d5e6f', text: expect.stringContaining('✖ padLeft("a", 3, "-")'), onlyMainsFailures: false },
    });
    const partial = 'Handoff from task t4 "Build a"\nstatus: partial\nacceptance: checks failed at 0123456789ab\nsummary: half';
    expect(readHandoffMessage(partial)?.acceptance).toMatchObject({ verdict: 'failed', commit: '0123456789ab' });
    const passed = 'Handoff from task t5 "Build b"\nstatus: done\nacceptance: passed at abcdef012345\n- `node --test`: passed\nsummary: built';
    expect(readHandoffMessage(passed)?.acceptance).toMatchObject({ verdict: 'passed', commit: 'abcdef012345' });
    const notRun = 'Handoff from task t6 "Build c"\nstatus: done\nacceptance: not run: nothing landed\nsummary: main had it';
    expect(readHandoffMessage(notRun)?.acceptance).toEqual({ verdict: 'not-run', commit: null, text: 'not run: nothing landed', onlyMainsFailures: false });
  });

  it('knows a synthetic handoff by colony\'s line', () => {
    const synthetic = 'Handoff from task t2 "Build a"\nstatus: failed\nwritten by colony: the agent ended without a handoff\nsummary: died\ncommits: none';
    expect(readHandoffMessage(synthetic)).toMatchObject({ status: 'failed', synthetic: true, summary: 'died', notes: [] });
  });

  it('is null for anything that is not a handoff', () => {
    expect(readHandoffMessage('Message from the user:\nhello')).toBeNull();
    expect(readHandoffMessage('Handoff from task t2 "x"\nstatus: finished\nsummary: ?')).toBeNull();
  });

  it('lists the paths a sub-planner says did not land', () => {
    const handoff = readHandoffMessage(MESSAGE);
    expect(handoff === null ? [] : notLandedPaths(handoff)).toEqual(['src/collections/c3.js', 'src/collections/c4.js']);
  });
});
