import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { expectSpendWithinOneCallPerAgent, expectWoundDown } from '../testing/budget-checks.js';
import { createExampleRepository, projectTestsPass, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { startSimServer, stopSimServer } from '../testing/sim-server-process.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';


let server: ChildProcess;
let baseUrl: string;
let repo: ExampleRepository;

/** The real `colony sim-server`, for the whole file. */
beforeAll(async () => {
  ({ process: server, baseUrl } = await startSimServer('sim?seed=4&bug=0.5'));
});

afterAll(async () => {
  const code = await stopSimServer(server);
  if (code !== null) expect(code).toBe(0);
});

beforeEach(() => {
  repo = createExampleRepository();
});

afterEach(() => {
  repo.cleanup();
});

describeRuns('the sim over real wire protocols', () => {
  it('finishes the task as openai-compatible:sim against colony sim-server', async () => {
    const task = join(repo.dir, 'tasks', '04-chunk.md');
    // Landing on main, the branch checked out, keeps the checkout in step: its tests are the work's.
    const result = await runCli(['work', task, '--repo', repo.dir, '--trunk', 'main', '--model', 'openai-compatible:sim', '--base-url', baseUrl, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ handoff: { status: 'done' } });
    expect(repo.git('show', 'main:src/index.js')).toContain("export * from './list/chunk.js';");
    expect(projectTestsPass(repo.dir)).toBe(true);
  });

  it('finishes the task as anthropic:sim against the same server', async () => {
    const task = join(repo.dir, 'tasks', '05-unique.md');
    const result = await runCli(['work', task, '--repo', repo.dir, '--trunk', 'main', '--model', 'anthropic:sim', '--base-url', baseUrl, '--json'], {
      env: { ANTHROPIC_API_KEY: 'local-test-key' },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ handoff: { status: 'done' } });
    expect(projectTestsPass(repo.dir)).toBe(true);
    // The key went to the server, and nowhere into the event log.
    const events = await runCli(['events', '--repo', repo.dir, '--json']);
    expect(events.stdout).not.toContain('local-test-key');
    // Each call after the first read what the one before it wrote, at the breakpoints the worker set.
    const usages = events.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; data: { usage?: { inputTokens: number; cachedInputTokens: number; cacheWriteTokens?: number } } })
      .flatMap((event) => (event.type === 'model.responded' && event.data.usage !== undefined ? [event.data.usage] : []));
    expect(usages.length).toBeGreaterThan(3);
    expect(usages[0]).toMatchObject({ cachedInputTokens: 0, cacheWriteTokens: expect.any(Number) });
    for (const usage of usages.slice(1)) expect(usage.cachedInputTokens).toBeGreaterThan(0);
    const input = usages.reduce((sum, usage) => sum + usage.inputTokens, 0);
    const cached = usages.reduce((sum, usage) => sum + usage.cachedInputTokens, 0);
    expect(cached / input).toBeGreaterThan(0.6);
  });

  it('builds the small example with the whole tree as openai-compatible:sim against colony sim-server', async () => {
    const toolbox = createExampleRepository('toolbox');
    try {
      const result = await runCli([
        'run',
        join(toolbox.dir, 'GOAL.md'),
        '--repo',
        toolbox.dir,
        '--trunk',
        'main',
        '--model',
        'openai-compatible:sim',
        '--base-url',
        baseUrl,
        '--workers',
        '4',
        '--json',
      ]);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const summary = JSON.parse(result.stdout) as { summary: { tokens: { input: number; cachedInput: number; cacheWrite: number } } };
      expect(summary).toMatchObject({ status: 'done', check: { passed: true }, summary: { run: { state: 'done' } } });
      // Told nothing, the server still read each agent's repeated prefix from its cache: colony kept it byte for byte.
      const { tokens } = summary.summary;
      expect(tokens.cachedInput / tokens.input).toBeGreaterThan(0.8);
      expect(tokens.cacheWrite).toBe(0);
      expect(toolbox.git('show', 'main:src/index.js')).toContain("export * from './numbers/clamp.js';");
      expect(projectTestsPass(toolbox.dir)).toBe(true);
    } finally {
      toolbox.cleanup();
    }
  }, 300_000);

  it('winds the tree down at a token budget over real HTTP, counting the usage the server reports', async () => {
    const toolbox = createExampleRepository('toolbox');
    try {
      const args = ['run', join(toolbox.dir, 'GOAL.md'), '--repo', toolbox.dir, '--model', 'openai-compatible:sim', '--base-url', baseUrl];
      const result = await runCli([...args, '--workers', '4', '--budget-tokens', '100000', '--quiet']);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/colony: the run's token budget of 100,000 tokens was used up: [\d,]+ tokens spent in all/);
      const run = await expectWoundDown(toolbox, 'tokens');
      expectSpendWithinOneCallPerAgent(run, 100_000, (data) => data.usage.inputTokens + data.usage.outputTokens);
    } finally {
      toolbox.cleanup();
    }
  }, 300_000);
});
