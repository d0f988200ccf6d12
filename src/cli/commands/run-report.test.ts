import { describe, expect, it } from 'vitest';
import { foldRunStatus } from '../../observe/status/run-status.js';
import { greenAdvanced, greenChecked } from '../../observe/testing/green-events.js';
import { openScriptedRun } from '../../observe/testing/scripted-run.js';
import type { RunSessionResult } from '../../orchestrator/session/run-session.js';
import { formatRunSummary } from './run-report.js';

const GREEN = 'a'.repeat(40);

type FinishedRun = Extract<RunSessionResult, { ok: true }>;

/** What `colony run` returns for a run that ended, main at GREEN. */
function finishedRun(runId: string, given: Pick<FinishedRun, 'status' | 'stateDir' | 'durationMs'>): FinishedRun {
  const none = { budgetExhausted: null, rootHandoff: null, check: null, checkoutProblem: null, trunkProblem: null, failure: null };
  return { ok: true, runId, ...given, ...none, mainBranch: 'main', checkedOutBranch: 'main', startCommit: GREEN, mainCommit: GREEN, workspaceMethod: 'worktree', sandboxMethod: 'none' };
}

describe('the summary colony run prints', () => {
  it('says where green points and how often main was red', async () => {
    const { store, run } = openScriptedRun();
    run.tick(10_000);
    run.land('worker-1', GREEN, ['src/parser.ts']);
    run.tick(10_000);
    run.append('system', greenChecked(GREEN, true, { trigger: 'release' }));
    run.append('system', greenAdvanced(GREEN, null, 'green-1'));
    run.endRun('done');
    const status = foldRunStatus({ events: await store.read(), tasks: [], deliveredHandoffs: [] });
    const result = finishedRun(run.runId, { status: 'done', stateDir: '/srv/project/.colony', durationMs: 20_000 });
    expect(formatRunSummary(result, status)).toContain('\ngreen: aaaaaaaaaaaa (1 snapshot, none red)\n');
    expect(formatRunSummary(result, status === null ? null : { ...status, green: null })).not.toContain('green:');
  });

  it('quotes the paths in the commands it prints, so a path with a space pastes as one argument', async () => {
    const { store, run } = openScriptedRun();
    run.endRun('stopped');
    const status = foldRunStatus({ events: await store.read(), tasks: [], deliveredHandoffs: [] });
    const result = finishedRun(run.runId, { status: 'stopped', stateDir: "/home/ann/My Projects/it's/.colony", durationMs: 1_000 });
    const summary = formatRunSummary(result, status);
    expect(summary).toContain("--state '/home/ann/My Projects/it'\\''s/.colony'");
    expect(summary).toContain("More: colony status --state '/home/ann/My Projects/it'\\''s/.colony'; colony events --state '/home/ann/My Projects/it'\\''s/.colony'");
  });
});
