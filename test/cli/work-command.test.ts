import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { createExampleRepository, projectTestsPass, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { describeRuns, RUNS_UNAVAILABLE } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository();
});

afterEach(() => {
  repo.cleanup();
});

async function eventsOf(dir: string): Promise<ColonyEvent[]> {
  const result = await runCli(['events', '--repo', dir, '--json']);
  expect(result.code).toBe(0);
  return result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as ColonyEvent);
}

function indexOfType(events: readonly ColonyEvent[], type: string): number {
  return events.findIndex((event) => event.type === type);
}

describeRuns('colony work', () => {
  it('finishes a module task with the sim: main gains the module, its test and the index line', async () => {
    const task = join(repo.dir, 'tasks', '01-pad.md');
    const result = await runCli(['work', task, '--repo', repo.dir, '--trunk', 'main', '--model', 'sim?seed=3', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as { handoff: { status: string; commits: string[]; evidence: string }; main: string };
    expect(output.handoff.status).toBe('done');
    expect(output.handoff.commits).toEqual([output.main]);
    expect(output.handoff.evidence).toMatch(/node --test/);

    const files = repo.git('show', '--name-only', '--format=', 'main').trim().split('\n').sort();
    expect(files).toEqual(['src/index.js', 'src/text/pad.js', 'src/text/pad.test.js']);
    expect(repo.git('show', 'main:src/index.js')).toContain("export * from './text/pad.js';");
    // The user's checkout was brought up to date and nothing of colony's state shows in it.
    expect(readFileSync(join(repo.dir, 'src/text/pad.js'), 'utf8')).toContain('export function padLeft');
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(repo.git('branch', '--list', 'colony/*')).toBe('');
    expect(projectTestsPass(repo.dir)).toBe(true);

    const events = await eventsOf(repo.dir);
    const order = [
      'run.started',
      'workspace.method-chosen',
      'workspace.created',
      'agent.started',
      'model.requested',
      'model.responded',
      'tool.started',
      'tool.ended',
      'merge.attempted',
      'merge.landed',
      'workspace.removed',
      'handoff.submitted',
      'agent.ended',
      'run.ended',
    ];
    const positions = order.map((type) => indexOfType(events, type));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    for (let index = 1; index < events.length; index += 1) {
      expect(events[index]?.ts).toBeGreaterThanOrEqual(events[index - 1]?.ts ?? 0);
      expect(events[index]?.seq).toBe((events[index - 1]?.seq ?? 0) + 1);
    }
    const names = events.filter((event) => event.type === 'tool.started').map((event) => event.data.name);
    expect(names).toEqual(expect.arrayContaining(['read_file', 'write_file', 'run_command', 'merge_to_main', 'submit_handoff']));
  });

  it('still finishes with a buggy first attempt and malformed tool calls', async () => {
    const task = join(repo.dir, 'tasks', '02-case.md');
    const result = await runCli(['work', task, '--repo', repo.dir, '--model', 'sim?seed=11&bug=1&malformed=0.3', '--quiet']);
    expect(result.code).toBe(0);
    expect(projectTestsPass(repo.dir)).toBe(true);

    const events = await eventsOf(repo.dir);
    const starts = new Map(
      events.flatMap((event) => (event.type === 'tool.started' ? [[event.data.callId, event.data] as const] : [])),
    );
    const ended = events.flatMap((event) => (event.type === 'tool.ended' ? [event.data] : []));
    const rejected = ended.filter((data) => /^error: (invalid arguments|unknown tool)/.test(data.output));
    expect(rejected.length).toBeGreaterThan(0);
    // Every malformed call was answered with an error result, never run.
    for (const data of rejected) expect(data.ok).toBe(false);
    expect(rejected.every((data) => starts.has(data.callId))).toBe(true);

    const testRuns = ended.filter((data) => data.name === 'run_command' && data.ok);
    expect(testRuns[0]?.output).toMatch(/^exit code: [1-9]/);
    expect(testRuns.at(-1)?.output).toMatch(/^exit code: 0/);
    const handoff = events.find((event) => event.type === 'handoff.submitted');
    expect(handoff?.type === 'handoff.submitted' && handoff.data.handoff.status).toBe('done');
  });

  it('lands on a branch of its own by default, beside the user\'s uncommitted edit, which it leaves as it was', async () => {
    writeFileSync(join(repo.dir, 'README.md'), 'my unsaved edit\n');
    const before = repo.git('rev-parse', 'main').trim();
    const result = await runCli(['work', join(repo.dir, 'tasks', '01-pad.md'), '--repo', repo.dir, '--model', 'sim?seed=3']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`landing on colony/pad-text-to-a-width (made from main at ${before.slice(0, 12)})`);
    expect(result.stdout).toContain('The work is on colony/pad-text-to-a-width');
    expect(result.stdout).toContain('colony land --repo');
    expect(repo.git('show', 'colony/pad-text-to-a-width:src/index.js')).toContain("export * from './text/pad.js';");
    expect(repo.git('rev-parse', 'main').trim()).toBe(before);
    expect(repo.git('status', '--porcelain')).toBe(' M README.md\n');
    expect(readFileSync(join(repo.dir, 'README.md'), 'utf8')).toBe('my unsaved edit\n');
    expect(existsSync(join(repo.dir, 'src/text/pad.js'))).toBe(false);
  });

  it('writes a synthetic failure handoff when the worker abandons its task, and main is untouched', async () => {
    const task = join(repo.dir, 'tasks', '03-slug.md');
    const before = repo.git('rev-parse', 'main');
    const result = await runCli(['work', task, '--repo', repo.dir, '--model', 'sim?seed=5&crash=1', '--json']);
    expect(result.code).toBe(1);
    const output = JSON.parse(result.stdout) as { handoff: { status: string; synthetic: boolean; summary: string } };
    expect(output.handoff).toMatchObject({ status: 'failed', synthetic: true });
    expect(output.handoff.summary).toMatch(/stopped calling tools/);
    expect(repo.git('rev-parse', 'main')).toBe(before);
    const events = await eventsOf(repo.dir);
    expect(events.map((event) => event.type)).toContain('agent.failed');
  });
});

describeRuns('colony work keeps work that did not land', () => {
  it('salvages the work of a worker stopped by its step budget under a ref of colony’s own, removes the workspace and its branch, and says where', async () => {
    const task = join(repo.dir, 'tasks', '01-pad.md');
    const before = repo.git('rev-parse', 'main');
    // Nothing landed: the branch colony made for the work goes too.
    const result = await runCli(['work', task, '--repo', repo.dir, '--model', 'sim?seed=3', '--max-steps', '3', '--json']);
    expect(result.code).toBe(1);
    const output = JSON.parse(result.stdout) as {
      handoff: { synthetic: boolean; summary: string; notes: string[] };
      keptWorkspace: string | null;
      salvaged: { commit: string; branch: string; files: string[] };
    };
    expect(output.handoff.synthetic).toBe(true);
    expect(output.handoff.summary).toMatch(/step budget ran out \(3 model calls\)/);
    expect(output.keptWorkspace).toBeNull();
    expect(output.salvaged.files.sort()).toEqual(['src/text/pad.js', 'src/text/pad.test.js']);
    expect(output.handoff.notes.join('\n')).toMatch(/2 uncommitted file\(s\) \(.*pad\.js.*\) were committed as [0-9a-f]{12}, kept with its commits as refs\/colony\/salvaged\/worker-\S+ \(see it with git log refs\/colony\/salvaged\/worker-/);
    expect(output.salvaged.branch).toMatch(/^refs\/colony\/salvaged\/worker-[a-z0-9]+$/);
    expect(repo.git('branch', '--list', 'colony/*')).toBe('');
    expect(repo.git('show', `${output.salvaged.branch}:src/text/pad.js`)).toContain('padLeft');
    expect(repo.git('log', '-1', '--format=%s', output.salvaged.branch)).toMatch(/^colony salvaged the uncommitted work of workspace worker-/);
    expect(repo.git('worktree', 'list', '--porcelain')).not.toContain(join(defaultStateDir(repo.dir), 'workspaces'));
    expect(repo.git('rev-parse', 'main')).toBe(before);
    expect(repo.git('status', '--porcelain')).toBe('');
  });
});

describeRuns('colony work --workspaces', () => {
  it('makes the workspace the way it is told, and says so in the events and the outcome', async () => {
    const task = join(repo.dir, 'tasks', '01-pad.md');
    const result = await runCli(['work', task, '--repo', repo.dir, '--model', 'sim?seed=3', '--workspaces', 'worktree', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ handoff: { status: 'done' }, workspaces: 'worktree' });
    const events = await eventsOf(repo.dir);
    expect(events.find((event) => event.type === 'workspace.method-chosen')).toMatchObject({ data: { method: 'worktree', forced: true } });
    expect(events.find((event) => event.type === 'workspace.created')).toMatchObject({ data: { method: 'worktree' } });
  });

  it('refuses a method it does not know', async () => {
    const result = await runCli(['work', join(repo.dir, 'tasks', '01-pad.md'), '--repo', repo.dir, '--model', 'sim', '--workspaces', 'copy']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--workspaces <method>' argument 'copy' is invalid\. Allowed choices are auto, overlay, worktree/);
  });
});

describe('colony work refuses bad input before changing anything', () => {
  const task = () => join(repo.dir, 'tasks', '01-pad.md');

  it('without a model', async () => {
    const result = await runCli(['work', task(), '--repo', repo.dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no model given[\s\S]*--model sim/);
  });

  it('with an unknown provider', async () => {
    const result = await runCli(['work', task(), '--repo', repo.dir, '--model', 'gpt:4']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown provider "gpt"[\s\S]*openai:<model>/);
  });

  it('with a missing API key, naming the variable', async () => {
    const result = await runCli(['work', task(), '--repo', repo.dir, '--model', 'anthropic:claude-sonnet-4-5']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/ANTHROPIC_API_KEY[\s\S]*--api-key-env/);
  });

  it('with a task file that does not exist', async () => {
    const result = await runCli(['work', join(repo.dir, 'nope.md'), '--repo', repo.dir, '--model', 'sim']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/task file .*nope\.md does not exist/);
  });

  it('with a malformed colony-spec', async () => {
    const bad = join(repo.dir, '..', 'bad.md');
    writeFileSync(bad, '# Bad\n\n```colony-spec\n{"project": {"index": "src/index.ts"}}\n```\n');
    const result = await runCli(['work', bad, '--repo', repo.dir, '--model', 'sim']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/colony-spec block that is not valid/);
  });

  it('with a directory that is not a git repository', async () => {
    const plain = mkdtempSync(join(tmpdir(), 'colony-plain-'));
    try {
      const result = await runCli(['work', task(), '--repo', plain, '--model', 'sim']);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/is not inside a git repository[\s\S]*git init/);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });

  it('with uncommitted changes and --trunk the branch checked out, which it leaves exactly as they were', async () => {
    const readme = join(repo.dir, 'README.md');
    writeFileSync(readme, 'my unsaved edit\n');
    const before = repo.git('rev-parse', 'main');
    const result = await runCli(['work', task(), '--repo', repo.dir, '--trunk', 'main', '--model', 'sim']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/uncommitted changes \(README\.md\), and the run lands on main, the branch checked out there[\s\S]*git stash[\s\S]*leave out --trunk main/);
    expect(readFileSync(readme, 'utf8')).toBe('my unsaved edit\n');
    expect(repo.git('rev-parse', 'main')).toBe(before);
    expect(repo.git('status', '--porcelain')).toBe(' M README.md\n');
  });

  it('with a state directory that is a file', async () => {
    const file = join(repo.dir, '..', 'not-a-dir');
    writeFileSync(file, 'x');
    const result = await runCli(['work', task(), '--repo', repo.dir, '--state', file, '--model', 'sim']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/is a file, not a directory: pass another path with --state/);
  });

  it.skipIf(RUNS_UNAVAILABLE !== null)('while another run works on the same repository', async () => {
    const slow = runCli(['work', task(), '--repo', repo.dir, '--model', 'sim?latency=150', '--quiet']);
    const holder = join(repo.dir, '.git', 'colony-run.lock.json');
    await expect.poll(() => existsSync(holder), { timeout: 5000 }).toBe(true);
    const elsewhere = mkdtempSync(join(tmpdir(), 'colony-other-state-'));
    // Another state directory does not make a second run on the same checkout safe.
    const second = await runCli(['work', join(repo.dir, 'tasks', '02-case.md'), '--repo', repo.dir, '--state', elsewhere, '--model', 'sim']);
    rmSync(elsewhere, { recursive: true, force: true });
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/another colony run \(process \d+, since .*\) is working on the repository .*text-kit\. Wait for it/);
    expect((await slow).code).toBe(0);
    expect(existsSync(holder)).toBe(false);
  });

  it('with a bad flag value or an unknown command', async () => {
    const steps = await runCli(['work', task(), '--model', 'sim', '--max-steps', 'many']);
    expect(steps.code).toBe(2);
    expect(steps.stderr).toMatch(/--max-steps.*expected a positive whole number, got "many"/);
    const unknown = await runCli(['wrok']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'wrok'/);
  });
});
