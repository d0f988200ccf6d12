import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { expectGreenRun, type StatusJson } from '../testing/run-checks.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

let repo: ExampleRepository;

beforeAll(() => {
  repo = createExampleRepository('stdlib');
});

afterAll(() => {
  repo.cleanup();
});

/** How many planners sit above an agent: 0 for the root planner's children. */
function plannerDepth(agents: StatusJson['agents'], id: string): number {
  const byId = new Map(agents.map((agent) => [agent.id, agent]));
  let depth = 0;
  for (let parent = byId.get(id)?.parentId ?? null; parent !== null; parent = byId.get(parent)?.parentId ?? null) depth += 1;
  return depth;
}

describeRuns('colony run on the large example', () => {
  it('builds 169 modules with nested sub-planners and 16 workers, green on main, one handoff per task', async () => {
    // The example's whole suite runs in one process, cheaper here than a process per covering
    // test file: this test is about the tree, so its tasks are given the whole suite.
    const result = await runCli(['run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--model', 'sim?wholesuite=1', '--workers', '16', '--quiet']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const { status } = await expectGreenRun(repo);
    const subPlanners = status.agents.filter((agent) => agent.role === 'sub-planner');
    expect(subPlanners.length).toBeGreaterThanOrEqual(11);
    // Two levels of sub-planners: some sub-planner was delegated by another sub-planner.
    expect(Math.max(...subPlanners.map((agent) => plannerDepth(status.agents, agent.id)))).toBeGreaterThanOrEqual(2);
  }, 900_000);
});
