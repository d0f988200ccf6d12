import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { runCliUntilLanded } from '../testing/colony-process.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository();
});

afterEach(() => {
  repo.cleanup();
});

function override(file: string, text: string): string {
  const dir = join(repo.dir, '.colony', 'prompts');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, file), text);
  return join(dir, file);
}

async function eventsOf(dir: string): Promise<ColonyEvent[]> {
  const result = await runCli(['events', '--repo', dir, '--json']);
  expect(result.code).toBe(0);
  return result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as ColonyEvent);
}

/** Runs `colony run` on the example and stops it, as Ctrl-C does, once a merge has landed. */
function runAndStop(): Promise<{ code: number; stderr: string }> {
  return runCliUntilLanded(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim?seed=4&latency=20..60', '--workers', '2', '--quiet'], defaultStateDir(repo.dir));
}

const PLANNER_OVERRIDE = 'You plan for this team. {{ROLE}}\n\nTests: {{TEST_COMMAND}}\nAt most {{PUBLISH_LIMIT}} tasks in one answer.\n';
const ROOT_OVERRIDE = 'You own the goal in the next message.';

const WORKER_OVERRIDE = [
  'You are this project’s worker. You own one task, given in the next message.',
  '',
  '{{TEST_COMMAND}} Run them before every merge.',
  '',
  'End with submit_handoff, once.',
  '',
].join('\n');

describeRuns('prompt overrides', () => {
  it('give a worker the repository’s prompt, with the test command filled in, and are recorded and announced', async () => {
    const path = override('worker.md', WORKER_OVERRIDE);
    const result = await runCli(['work', join(repo.dir, 'tasks', '01-pad.md'), '--repo', repo.dir, '--model', 'sim?seed=3', '--quiet']);
    expect(result.code).toBe(0);
    // Announced even with --quiet: what the agents are told changed.
    expect(result.stderr).toBe(`colony: 1 prompt overridden by ${join(repo.dir, '.colony', 'prompts')}: worker.md\n`);

    const events = await eventsOf(repo.dir);
    const loaded = events.find((event) => event.type === 'prompts.loaded');
    expect(loaded?.data).toEqual({ overridden: [{ name: 'worker', path, sha256: createHash('sha256').update(WORKER_OVERRIDE).digest('hex') }] });
    const started = events.find((event) => event.type === 'agent.started');
    if (started?.type !== 'agent.started') throw new Error('the worker never started');
    expect(started.data.systemPrompt).toBe(
      WORKER_OVERRIDE.trim().replace('{{TEST_COMMAND}}', "Run this project's tests with `npm test` (the test script in package.json)."),
    );
    const handoff = events.find((event) => event.type === 'handoff.submitted');
    expect(handoff?.type === 'handoff.submitted' && handoff.data.handoff.status).toBe('done');
  }, 120_000);

  it('give planners theirs in a run, are announced and recorded, and are read again when the run resumes', async () => {
    const prompts = join(repo.dir, '.colony', 'prompts');
    override('planner.md', PLANNER_OVERRIDE);
    override('root-planner-role.md', ROOT_OVERRIDE);
    const stopped = await runAndStop();
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toBe(`colony: 2 prompts overridden by ${prompts}: planner.md, root-planner-role.md\n`);
    const before = await eventsOf(repo.dir);
    const firstLoad = before.filter((event) => event.type === 'prompts.loaded');
    expect(firstLoad.map((event) => event.type === 'prompts.loaded' && event.data.overridden.map((each) => each.name))).toEqual([['planner', 'root-planner-role']]);
    const root = before.find((event) => event.type === 'agent.started' && event.data.role === 'root-planner');
    expect(root?.type === 'agent.started' && root.data.systemPrompt).toBe(
      "You plan for this team. You own the goal in the next message.\n\nTests: Run this project's tests with `npm test` (the test script in package.json).\nAt most 4 tasks in one answer.",
    );
    const workersBefore = new Set(before.filter((event) => event.type === 'agent.started' && event.data.role === 'worker').map((event) => event.agentId));

    override('worker.md', WORKER_OVERRIDE);
    const resumed = await runCli(['resume', '--repo', repo.dir, '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toBe(`colony: 3 prompts overridden by ${prompts}: planner.md, root-planner-role.md, worker.md\n`);
    const after = (await eventsOf(repo.dir)).slice(before.length);
    expect(after.findIndex((event) => event.type === 'prompts.loaded')).toBeGreaterThan(after.findIndex((event) => event.type === 'run.resumed'));
    const reloaded = after.find((event) => event.type === 'prompts.loaded');
    expect(reloaded?.type === 'prompts.loaded' && reloaded.data.overridden.map((each) => each.name)).toEqual(['planner', 'root-planner-role', 'worker']);
    // Workers started after the resume are told the new prompt; those taken back keep the conversation they had.
    const newWorkers = after.filter((event) => event.type === 'agent.started' && event.data.role === 'worker' && !workersBefore.has(event.agentId));
    expect(newWorkers.length).toBeGreaterThan(0);
    for (const started of newWorkers) expect(started.type === 'agent.started' && started.data.systemPrompt).toMatch(/^You are this project’s worker\./);
  }, 300_000);

  it('that colony cannot use stop a run before it starts, saying which file is wrong and what is allowed', async () => {
    override('worker.md', 'Do the task well.');
    override('planer.md', 'You plan. {{ROLE}} {{TEST_COMMAND}} {{PUBLISH_LIMIT}}');
    // The overrides are the project's own files, shown by git until they are committed.
    const status = repo.git('status', '--porcelain');
    expect(status).toBe('?? .colony/\n');
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`colony: colony cannot use the prompt overrides in ${join(repo.dir, '.colony', 'prompts')}:`);
    expect(result.stderr).toContain(
      `- ${join(repo.dir, '.colony', 'prompts', 'worker.md')}: it leaves out {{TEST_COMMAND}}, which colony fills in when it uses this prompt. This prompt must hold {{TEST_COMMAND}}, and no other {{...}}.`,
    );
    expect(result.stderr).toContain(`- ${join(repo.dir, '.colony', 'prompts', 'planer.md')}: no prompt of colony's is called that. The files allowed here are `);
    // Nothing was recorded: the run can start once the files are fixed.
    expect(existsSync(join(defaultStateDir(repo.dir), 'colony.db'))).toBe(false);
    expect(repo.git('status', '--porcelain')).toBe(status);
  });
});
