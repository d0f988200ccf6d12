import { describe, expect, it } from 'vitest';
import { dispatchToolCall } from '../agent/tool-dispatch.js';
import { handoffFromFinish } from '../orchestrator/roles/planner/planner-board.js';
import { createPlannerRoleTools, finishReportFromInput, type FinishReport, type PlannerBoard } from './planner-tools.js';

/** A board that records finishes and refuses nothing else the test does not call. */
function recordingBoard(): { readonly board: PlannerBoard; readonly finished: FinishReport[] } {
  const finished: FinishReport[] = [];
  const refuse = async () => ({ ok: false as const, error: 'not in this test' });
  return {
    finished,
    board: { createTask: refuse, delegate: refuse, writeScratchpad: () => undefined, setAndon: async () => undefined, finish: (report) => (finished.push(report), { ok: true }) },
  };
}

describe("a planner's finish", () => {
  it('is refused without a status, saying so, and recorded with one', async () => {
    const { board, finished } = recordingBoard();
    const tools = new Map(createPlannerRoleTools(board).map((tool) => [tool.name, tool]));
    const signal = new AbortController().signal;
    const without = await dispatchToolCall({ id: 'c1', name: 'finish', input: JSON.stringify({ summary: 'built it' }) }, tools, signal);
    expect(without).toMatchObject({ ran: false, rejection: 'invalid-arguments', result: { ok: false, error: expect.stringMatching(/^invalid arguments for finish: .*status/) } });
    expect(finished).toEqual([]);
    const input = { summary: 'half of it', status: 'partial', evidence: '$ npm test: 12 pass, 1 fail', deviations: ['src/geo/ was left to a later run'] };
    const partial = await dispatchToolCall({ id: 'c2', name: 'finish', input: JSON.stringify(input) }, tools, signal);
    expect(partial).toMatchObject({ ran: true, result: { ok: true, output: expect.stringMatching(/^Finished: partial\./) } });
    expect(finished).toMatchObject([{ status: 'partial', summary: 'half of it', evidence: input.evidence, deviations: input.deviations }]);
    // Its evidence and deviations reach the planner above, as a worker's do.
    expect(handoffFromFinish(finished[0] as FinishReport, { status: 'ended', steps: 3 })).toMatchObject({ status: 'partial', evidence: input.evidence, deviations: input.deviations });
  });

  it('read back from a log written before the status was required is done, as it was then', () => {
    expect(finishReportFromInput(JSON.stringify({ summary: 'built it' }))).toMatchObject({ status: 'done', summary: 'built it' });
  });
});
