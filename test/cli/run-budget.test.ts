import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { expectSpendWithinOneCallPerAgent, expectWoundDown, readRun } from '../testing/budget-checks.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

/** A whole run of the small example takes seconds to tens of seconds, more on a loaded machine. */
const RUN_TIMEOUT_MS = 300_000;

/** Latency makes calls overlap, as a real model's do: several are in flight when a limit is used up. */
const SIM = 'sim?latency=40..160';

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
});

afterEach(() => {
  repo.cleanup();
});

function runArgs(...extra: string[]): string[] {
  return ['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', SIM, '--workers', '4', ...extra];
}

describeRuns('colony run with a budget', () => {
  it('winds the tree down when the token budget is used up: one last call each, a handoff for every task, the limit named', async () => {
    // The whole example takes about 300,000 tokens on the sim.
    const result = await runCli(runArgs('--budget-tokens', '120000'));
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('budget-exhausted');
    expect(result.stderr).toMatch(/colony: the run's token budget of 120,000 tokens was used up: [\d,]+ tokens spent in all/);
    const run = await expectWoundDown(repo, 'tokens');
    expectSpendWithinOneCallPerAgent(run, 120_000, (data) => data.usage.inputTokens + data.usage.outputTokens);
    // Tasks nobody got to say why; the root planner finished with what landed.
    expect(run.tasks.find((task) => task.parentTaskId === null)?.handoff?.summary).toMatch(/budget/);
    expect(run.tasks.some((task) => task.handoff?.summary.startsWith('not started: ') === true || task.handoff?.summary.includes('budget was used up') === true)).toBe(true);

    const status = await runCli(['status', '--repo', repo.dir]);
    expect(status.stdout).toMatch(/Budget: [\d,]+ tokens of 120,000 tokens \(\d+%\), used up/);
    const json = JSON.parse((await runCli(['status', '--repo', repo.dir, '--json'])).stdout) as { budget: { tokens: { limit: number } } };
    expect(json.budget.tokens.limit).toBe(120_000);
  }, RUN_TIMEOUT_MS);

  it('keeps the promise when workers\' first calls are in flight as the limit is used up: a call landing past it is the agent\'s last', async () => {
    // Large, slow calls: several are in flight when the limit is used up, first calls among them
    // with nothing held back for them yet.
    const result = await runCli([...runArgs('--budget-tokens', '45000', '--quiet'), '--model', 'sim?tokens=5000&latency=300..400']);
    expect(result.code).toBe(1);
    const run = await expectWoundDown(repo, 'tokens');
    expectSpendWithinOneCallPerAgent(run, 45_000, (data) => data.usage.inputTokens + data.usage.outputTokens);
  }, RUN_TIMEOUT_MS);

  it('gives a delegated subtree half of what the run has left; the subtree winds down alone and hands off to the root', async () => {
    // Nine modules in one folder make the sim root planner delegate that folder to a sub-planner.
    const goal = readFileSync(join(repo.dir, 'GOAL.md'), 'utf8')
      .replaceAll('src/strings/', 'src/lib/')
      .replace(/src\/numbers\/(stats|range|gcd)\.js/g, 'src/lib/$1.js');
    writeFileSync(join(repo.dir, 'GOAL.md'), goal);
    repo.git('commit', '-qam', 'one large folder');
    const result = await runCli(runArgs('--budget-tokens', '160000', '--quiet'));
    expect(result.code).toBe(1);
    const { events, tasks } = await readRun(repo);
    const allotted = events.find((event) => event.type === 'budget.allotted');
    if (allotted?.type !== 'budget.allotted') throw new Error('no subtree was allotted a share');
    const subtree = allotted.data.taskId;
    expect(tasks.find((task) => task.id === subtree)).toMatchObject({ kind: 'planner', scope: 'src/lib/' });
    // Half of what the run had left when it was delegated: the root had spent a little by then.
    expect(allotted.data.tokens).toBeGreaterThan(70_000);
    expect(allotted.data.tokens).toBeLessThanOrEqual(80_000);
    const used = events.findIndex((event) => event.type === 'budget.exhausted' && event.data.taskId === subtree && event.data.scope === 'subtree');
    expect(used).toBeGreaterThan(-1);
    // The subtree's handoff reached the root, and the run's own limit was used up later, if at all.
    const handedOff = events.findIndex((event) => event.type === 'handoff.delivered' && event.data.taskId === subtree);
    expect(handedOff).toBeGreaterThan(used);
    const runUsed = events.findIndex((event) => event.type === 'budget.exhausted' && event.data.scope === 'run');
    expect(runUsed === -1 || runUsed > used).toBe(true);
    expect(tasks.find((task) => task.id === subtree)?.handoff?.status).toMatch(/partial|blocked/);
    for (const task of tasks) expect(task.handoff, `task ${task.id} has no handoff`).not.toBeNull();
  }, RUN_TIMEOUT_MS);

  it('reminds the root planner in its conversation when the run has spent 80%', async () => {
    // One worker at a time: the planner calls the model after every handoff, so one of its
    // calls falls between the warning and the end.
    const result = await runCli([...runArgs('--budget-tokens', '250000', '--quiet'), '--workers', '1']);
    expect(result.code).toBe(1);
    const { events } = await readRun(repo);
    const root = events.find((event) => event.type === 'agent.started' && event.data.role === 'root-planner')?.agentId;
    const reminders = events.filter((event) => event.agentId === root && event.type === 'agent.nudged' && event.data.message.startsWith('Budget warning:'));
    expect(reminders).toHaveLength(1);
    expect(reminders[0]).toMatchObject({ data: { message: expect.stringMatching(/the run has spent [\d,]+ tokens of its 250,000 tokens \(8\d%\); [\d,]+ tokens left/) } });
  }, RUN_TIMEOUT_MS);

  it('winds down on the clock with --max-hours, every task handed off', async () => {
    const result = await runCli([...runArgs('--max-hours', '0.0008', '--quiet'), '--model', 'sim?latency=150..300']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/colony: the run's time limit of 3 seconds ran out: \d+ seconds passed in all/);
    await expectWoundDown(repo, 'time');
  }, RUN_TIMEOUT_MS);

  it('winds down at a limit in dollars, with the sim priced by --prices', async () => {
    const prices = join(repo.dir, '..', 'prices.json');
    writeFileSync(prices, JSON.stringify({ sim: { inputPerMTok: 10, outputPerMTok: 30 } }));
    const result = await runCli(runArgs('--budget-usd', '1.5', '--prices', prices, '--quiet'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/colony: the run's budget in US dollars of \$1\.50 was used up: \$\d+\.\d+ spent in all/);
    const run = await expectWoundDown(repo, 'usd');
    expectSpendWithinOneCallPerAgent(run, 1.5, (data) => data.costUsd ?? 0);
  }, RUN_TIMEOUT_MS);

  it('refuses limits it cannot keep, with exit 2 and what to pass instead', async () => {
    const unpriced = await runCli([...runArgs('--budget-usd', '5'), '--model', 'openai-compatible:qwen3-coder', '--base-url', 'http://127.0.0.1:9/v1']);
    expect(unpriced.code).toBe(2);
    expect(unpriced.stderr).toContain('colony does not know the price of openai-compatible:qwen3-coder');
    expect(unpriced.stderr).toContain('--prices FILE.json');

    const zero = await runCli(runArgs('--budget-tokens', '0'));
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('expected a positive whole number');
    const hours = await runCli(runArgs('--max-hours', 'soon'));
    expect(hours.code).toBe(2);
    expect(hours.stderr).toContain('expected a number of hours such as 2 or 0.25, more than 0, got "soon"');
    const dollars = await runCli(runArgs('--budget-usd', '-3'));
    expect(dollars.code).toBe(2);
    expect(dollars.stderr).toContain('expected an amount of US dollars');

    const prices = join(repo.dir, '..', 'prices.json');
    writeFileSync(prices, JSON.stringify({ sim: { inputPerMTok: 'cheap', outputPerMTok: 1 } }));
    const badPrices = await runCli(runArgs('--budget-usd', '1', '--prices', prices));
    expect(badPrices.code).toBe(2);
    expect(badPrices.stderr).toContain('"sim"."inputPerMTok": expected a number of US dollars per million tokens');
    // Nothing ran.
    expect((await runCli(['status', '--repo', repo.dir])).stderr).toContain('there is no run');
  });
});
