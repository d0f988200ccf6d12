import { describe, expect, it } from 'vitest';
import type { Handoff } from '../events/handoff.js';
import { createSubmitHandoffTool, handoffFromSubmitInput } from './submit-handoff-tool.js';
import { finishReportFromInput } from './planner-tools.js';
import { toolContext } from './testing/workspace-fixture.js';

describe('submit_handoff', () => {
  it('builds the handoff, hands it to the callback and ends the agent', async () => {
    const submitted: Handoff[] = [];
    const tool = createSubmitHandoffTool((handoff) => submitted.push(handoff));
    const input = tool.parameters.parse({
      status: 'partial',
      summary: 'Parser done, printer not started.',
      evidence: 'npm test: 12 passed',
      concerns: ['the grammar is ambiguous for nested lists'],
      follow_ups: ['write the printer'],
    });
    expect(await tool.execute(input, toolContext())).toEqual({ ok: true, output: 'handoff submitted', endsAgent: true });
    expect(submitted).toEqual([
      {
        status: 'partial',
        summary: 'Parser done, printer not started.',
        commits: [],
        evidence: 'npm test: 12 passed',
        notes: [],
        concerns: ['the grammar is ambiguous for nested lists'],
        deviations: [],
        findings: [],
        feedback: [],
        followUps: ['write the printer'],
        synthetic: false,
      },
    ]);
  });

  it('sends a first claim of done without evidence back once, then takes the next one with a concern', async () => {
    const submitted: Handoff[] = [];
    const tool = createSubmitHandoffTool((handoff) => submitted.push(handoff), { evidenceFirst: 'Evidence first: show the tests.' });
    const unproven = tool.parameters.parse({ status: 'done', summary: 'All built.' });
    expect(await tool.execute(unproven, toolContext())).toEqual({ ok: false, error: 'Evidence first: show the tests.' });
    expect(submitted).toEqual([]);
    expect(await tool.execute(unproven, toolContext())).toEqual({ ok: true, output: 'handoff submitted', endsAgent: true });
    expect(submitted[0]?.concerns).toEqual(['The worker claimed done without evidence, even when asked for it.']);
  });

  it('does not ask again a worker that was asked before a restart', async () => {
    const submitted: Handoff[] = [];
    const tool = createSubmitHandoffTool((handoff) => submitted.push(handoff), { evidenceFirst: 'Evidence first: show the tests.', askedBefore: true });
    const result = await tool.execute(tool.parameters.parse({ status: 'done', summary: 'All built.' }), toolContext());
    expect(result.ok).toBe(true);
    expect(submitted[0]?.concerns).toEqual(['The worker claimed done without evidence, even when asked for it.']);
  });

  it('sends a first done whose work is not on main back once with what the workspace holds, takes a partial at once, and the next done with a concern', async () => {
    const submitted: Handoff[] = [];
    let held: string | null = 'Not landed: uncommitted: src/pad.js';
    const tool = createSubmitHandoffTool((handoff) => submitted.push(handoff), { unlanded: () => Promise.resolve(held) });
    const done = tool.parameters.parse({ status: 'done', summary: 'Built pad.', evidence: 'npm test: 3 passed' });
    const partial = tool.parameters.parse({ status: 'partial', summary: 'Half of pad.', evidence: 'npm test: 1 failed' });
    expect(await tool.execute(done, toolContext())).toEqual({ ok: false, error: 'Not landed: uncommitted: src/pad.js' });
    expect(await tool.execute(partial, toolContext())).toMatchObject({ ok: true });
    expect(await tool.execute(done, toolContext())).toMatchObject({ ok: true });
    expect(submitted.map((handoff) => [handoff.status, handoff.concerns])).toEqual([
      ['partial', []],
      ['done', ['The worker claimed done while its workspace still held work that was not on main, even when told.']],
    ]);
    // Nothing held: a done is taken at once, with no concern.
    held = null;
    const clean = createSubmitHandoffTool((handoff) => submitted.push(handoff), { unlanded: () => Promise.resolve(held) });
    expect(await clean.execute(done, toolContext())).toMatchObject({ ok: true });
    expect(submitted.at(-1)?.concerns).toEqual([]);
  });

  it('takes a claim of done with evidence, and a failure without, at once', async () => {
    const submitted: Handoff[] = [];
    const tool = createSubmitHandoffTool((handoff) => submitted.push(handoff), { evidenceFirst: 'Evidence first: show the tests.' });
    const failed = await tool.execute(tool.parameters.parse({ status: 'failed', summary: 'Could not build it.' }), toolContext());
    expect(failed.ok).toBe(true);
    const proven = await tool.execute(tool.parameters.parse({ status: 'done', summary: 'Built.', evidence: '$ npm test\n3 passed' }), toolContext());
    expect(proven.ok).toBe(true);
    expect(submitted.map((handoff) => handoff.concerns)).toEqual([[], []]);
  });

  it('rejects an unknown status and an empty summary in its parameters', () => {
    const tool = createSubmitHandoffTool(() => undefined);
    expect(tool.parameters.safeParse({ status: 'finished', summary: 'x' }).success).toBe(false);
    expect(tool.parameters.safeParse({ status: 'done', summary: '' }).success).toBe(false);
    expect(tool.name).toBe('submit_handoff');
  });
});

describe('reading a recorded call back after a restart', () => {
  it('rebuilds the handoff a recorded submit_handoff made, the same as the tool made it', async () => {
    const input = '{"status":"done","summary":"Built pad.","evidence":"node --test: 3 passed","follow_ups":["index"]}';
    let made: Handoff | null = null;
    await createSubmitHandoffTool((handoff) => (made = handoff)).execute(JSON.parse(input) as never, toolContext());
    expect(handoffFromSubmitInput(input)).toEqual(made);
    expect(handoffFromSubmitInput(input)).toMatchObject({ status: 'done', evidence: 'node --test: 3 passed', followUps: ['index'], synthetic: false });
    expect(handoffFromSubmitInput('{"status":"done"')).toBeNull();
    expect(handoffFromSubmitInput('{"status":"finished","summary":"x"}')).toBeNull();
  });

  it('rebuilds the report a recorded finish made', () => {
    expect(finishReportFromInput('{"summary":"All modules landed.","concerns":["slow tests"]}')).toEqual({
      status: 'done',
      summary: 'All modules landed.',
      evidence: '',
      notes: [],
      concerns: ['slow tests'],
      deviations: [],
      findings: [],
      feedback: [],
      followUps: [],
    });
    expect(finishReportFromInput('not json')).toBeNull();
  });
});
