import { describe, expect, it } from 'vitest';
import { foldRunStatus } from '../../observe/status/run-status.js';
import { greenAdvanced, greenChecked } from '../../observe/testing/green-events.js';
import { openScriptedRun } from '../../observe/testing/scripted-run.js';
import type { RunSessionResult } from '../../orchestrator/session/run-session.js';
import { formatRunSummary } from './run-report.js';

const GREEN = 'a'.repeat(40);

describe('the summary colony run prints', () => {
  it('says where green points and how often main was red', () => {
    const { store, run } = openScriptedRun();
    run.tick(10_000);
    run.land('worker-1', GREEN, ['src/parser.ts']);
    run.tick(10_000);
    run.append('system', greenChecked(GREEN, true, { trigger: 'release' }));
    run.append('system', greenAdvanced(GREEN, null, 'green-1'));
    run.endRun('done');
    const status = foldRunStatus({ events: store.read(), tasks: [], deliveredHandoffs: [] });
    const result: Extract<RunSessionResult, { ok: true }> = {
      ok: true,
      runId: run.runId,
      status: 'done',
      budgetExhausted: null,
      rootHandoff: null,
      check: null,
      mainBranch: 'main',
      mainCommit: GREEN,
      stateDir: '/srv/project/.colony',
      checkoutProblem: null,
      failure: null,
      durationMs: 20_000,
      workspaceMethod: 'worktree',
      sandboxMethod: 'none',
    };
    expect(formatRunSummary(result, status)).toContain('\ngreen: aaaaaaaaaaaa (1 snapshot, none red)\n');
    expect(formatRunSummary(result, status === null ? null : { ...status, green: null })).not.toContain('green:');
  });

  it('quotes the paths in the commands it prints, so a path with a space pastes as one argument', () => {
    const { store, run } = openScriptedRun();
    run.endRun('stopped');
    const status = foldRunStatus({ events: store.read(), tasks: [], deliveredHandoffs: [] });
    const result: Extract<RunSessionResult, { ok: true }> = {
      ok: true,
      runId: run.runId,
      status: 'stopped',
      budgetExhausted: null,
      rootHandoff: null,
      check: null,
      mainBranch: 'main',
      mainCommit: GREEN,
      stateDir: "/home/ann/My Projects/it's/.colony",
      checkoutProblem: null,
      failure: null,
      durationMs: 1_000,
      workspaceMethod: 'worktree',
      sandboxMethod: 'none',
    };
    const summary = formatRunSummary(result, status);
    expect(summary).toContain("--state '/home/ann/My Projects/it'\\''s/.colony'");
    expect(summary).toContain("More: colony status --state '/home/ann/My Projects/it'\\''s/.colony'; colony events --state '/home/ann/My Projects/it'\\''s/.colony'");
  });
});
