import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventBody } from '../../../events/event-types.js';
import type { HandoffStatus } from '../../../events/handoff.js';
import { openRepository, type Repository } from '../../../workspace/git/repository.js';
import { createExampleRepository, type ExampleRepository } from '../../../../test/testing/example-repository.js';
import { checkAcceptance, NOTHING_LANDED, runAcceptanceChecks, type AcceptanceCheckRequest } from './acceptance-checks.js';
import { unconfinedCommandRunners } from '../../setup/command-sandbox.js';
import { RUN_STOPPED } from '../../context/run-context.js';
import { defaultStateDir } from '../../setup/state-directory.js';

let example: ExampleRepository;
let repo: Repository;
let recorded: EventBody[];
let viewsDir: string;

beforeEach(async () => {
  example = createExampleRepository();
  const opened = await openRepository(example.dir);
  if (!opened.ok) throw new Error(opened.error);
  repo = opened.repo;
  recorded = [];
  viewsDir = join(defaultStateDir(example.dir), 'views');
});

afterEach(() => {
  example.cleanup();
});

function commitOnMain(file: string, content: string): string {
  writeFileSync(join(example.dir, file), content);
  example.git('add', file);
  example.git('commit', '-q', '-m', `add ${file}`);
  return example.git('rev-parse', 'HEAD').trim();
}

function request(commands: readonly string[], commit: string | null, overrides: Partial<AcceptanceCheckRequest> = {}): AcceptanceCheckRequest {
  const claimed: HandoffStatus = 'done';
  return {
    repo,
    taskId: 'task-1',
    commands,
    claimed,
    commit,
    viewsDir,
    runnerFor: (dir) => unconfinedCommandRunners().forAgent('system', dir),
    record: (event) => recorded.push(event),
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe('acceptance checks', () => {
  it("run every command on the trunk as it was at the worker's merge, not as it is now, and remove the checkout", async () => {
    const merged = commitOnMain('landed.txt', 'the worker landed this\n');
    // Main moves on after the worker's merge; the checks judge the merge.
    commitOnMain('later.txt', 'someone else landed this later\n');
    const outcome = await runAcceptanceChecks(request(['test -f landed.txt && cat landed.txt', 'test ! -e later.txt'], merged));
    expect(outcome).toEqual({
      ok: true,
      verdict: {
        commit: merged,
        passed: true,
        skipped: null,
        results: [
          { command: 'test -f landed.txt && cat landed.txt', passed: true, exitCode: 0, timedOut: false, outputTail: 'the worker landed this' },
          { command: 'test ! -e later.txt', passed: true, exitCode: 0, timedOut: false, outputTail: '' },
        ],
      },
    });
    expect(recorded.map((event) => event.type)).toEqual(['acceptance.started', 'acceptance.checked']);
    expect(recorded[0]).toEqual({ type: 'acceptance.started', data: { taskId: 'task-1', commit: merged, commands: ['test -f landed.txt && cat landed.txt', 'test ! -e later.txt'] } });
    expect(recorded[1]).toMatchObject({ type: 'acceptance.checked', data: { taskId: 'task-1', claimed: 'done', commit: merged, passed: true, skipped: null } });
    expect(readdirSync(viewsDir)).toEqual([]);
    expect(example.git('worktree', 'list')).not.toContain(viewsDir);
  });

  it('say which command failed, with the end of its output, and run the rest', async () => {
    const merged = commitOnMain('landed.txt', 'x\n');
    const noisy = `for i in $(seq 1 3000); do echo "line $i"; done; echo 'the last words' >&2; exit 3`;
    const outcome = await runAcceptanceChecks(request([noisy, 'true'], merged));
    if (!outcome.ok) throw new Error(outcome.error);
    expect(outcome.verdict).toMatchObject({ commit: merged, passed: false, skipped: null });
    const [failed, passed] = outcome.verdict.results;
    expect(failed).toMatchObject({ command: noisy, passed: false, exitCode: 3, timedOut: false });
    expect(failed?.outputTail.split('\n').at(-1)).toBe('the last words');
    expect(failed?.outputTail.split('\n')).toHaveLength(25);
    expect(passed).toMatchObject({ command: 'true', passed: true, exitCode: 0 });
    const checked = recorded.find((event) => event.type === 'acceptance.checked');
    if (checked?.type !== 'acceptance.checked') throw new Error('no acceptance.checked');
    const output = checked.data.results[0]?.output ?? '';
    expect(output.length).toBeLessThanOrEqual(4_000);
    expect(output.length).toBeGreaterThan(3_000);
    expect(output.endsWith('the last words')).toBe(true);
    expect(output.startsWith('line ')).toBe(true);
    expect(checked.data.results[0]?.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("mark the failures main already showed before the worker's merge, and keep the new ones apart", async () => {
    const merged = commitOnMain('landed.txt', 'x\n');
    const failing = `echo 'not ok 1 - pads left'; echo 'not ok 2 - cases title'; exit 1`;
    const before = { commit: 'a'.repeat(40), command: 'npm test', failures: ['not ok - pads left', 'not ok - gone since'] };
    const outcome = await runAcceptanceChecks(request([failing, 'true'], merged, { redBefore: before }));
    if (!outcome.ok) throw new Error(outcome.error);
    const [failed, passed] = outcome.verdict.results;
    expect(failed).toMatchObject({ passed: false, alreadyFailing: ['not ok - pads left'], newFailures: ['not ok - cases title'] });
    expect(passed).not.toHaveProperty('alreadyFailing');
    // main passed before the merge: nothing is marked.
    const clean = await runAcceptanceChecks(request([failing], merged, { redBefore: null }));
    if (!clean.ok) throw new Error(clean.error);
    expect(clean.verdict.results[0]).not.toHaveProperty('alreadyFailing');
  });

  it('stop a command at its time limit and count it as failed', async () => {
    const merged = commitOnMain('landed.txt', 'x\n');
    const outcome = await runAcceptanceChecks(request(['sleep 20'], merged, { commandTimeoutMs: 300 }));
    if (!outcome.ok) throw new Error(outcome.error);
    expect(outcome.verdict.passed).toBe(false);
    expect(outcome.verdict.results).toMatchObject([{ command: 'sleep 20', passed: false, exitCode: null, timedOut: true }]);
  });

  it('run nothing and say so when none of the work landed, or when the commit cannot be checked out', async () => {
    const nothing = await runAcceptanceChecks(request(['touch ran'], null));
    expect(nothing).toEqual({ ok: true, verdict: { commit: null, passed: false, skipped: NOTHING_LANDED, results: [] } });
    expect(recorded).toEqual([
      { type: 'acceptance.checked', data: { taskId: 'task-1', claimed: 'done', commit: null, passed: false, skipped: 'nothing landed', results: [] } },
    ]);
    const missing = await runAcceptanceChecks(request(['touch ran'], 'f'.repeat(40)));
    expect(missing).toMatchObject({ ok: true, verdict: { commit: null, passed: false, skipped: expect.stringContaining(`colony could not check out ${'f'.repeat(12)}`) } });
    expect(existsSync(join(example.dir, 'ran'))).toBe(false);
  });

  it('give no verdict when stopped while a command runs, and say the run stopped when that was the reason', async () => {
    const merged = commitOnMain('landed.txt', 'x\n');
    const stop = new AbortController();
    const pending = checkAcceptance(request(['sleep 20', 'touch second-ran'], merged, { signal: stop.signal }));
    setTimeout(() => stop.abort(RUN_STOPPED), 300);
    expect(await pending).toBe(RUN_STOPPED);
    expect(recorded.map((event) => event.type)).toEqual(['acceptance.started']);
    expect(readdirSync(viewsDir)).toEqual([]);

    const hung = new AbortController();
    const stopped = checkAcceptance(request(['sleep 20'], merged, { signal: hung.signal }));
    setTimeout(() => hung.abort({ hung: true }), 300);
    expect(await stopped).toMatchObject({ commit: null, passed: false, skipped: 'the checks were stopped before they ended: the worker was stopped' });
  });
});
