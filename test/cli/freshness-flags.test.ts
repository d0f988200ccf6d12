import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { keepModules } from '../testing/small-goal.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

const RUN_TIMEOUT_MS = 120_000;

let repo: ExampleRepository;

beforeEach(() => {
  repo = createExampleRepository('toolbox');
  keepModules(repo, ['src/strings/truncate.js', 'src/strings/case.js', 'src/numbers/clamp.js']);
});

afterEach(() => {
  repo.cleanup();
});

describeRuns('colony run with freshness flags', () => {
  it('records the windows, output limits, threshold and reminder intervals it was given, asks each call for that output, and reminds each role on that schedule', async () => {
    const result = await runCli([
      'run', join(repo.dir, 'GOAL.md'), '--repo', repo.dir, '--workers', '2',
      '--context-window', 'sim=64000', '--max-output-tokens', '20000', '--compact-at', '70', '--reflect-every', '3', '--scratchpad-every', 'planner=2,worker=off',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const events = (await runCli(['events', '--repo', repo.dir, '--json'])).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as ColonyEvent);

    const configured = events.find((event) => event.type === 'run.configured');
    expect(configured?.type === 'run.configured' && configured.data.settings.freshness).toMatchObject({
      contextWindows: { all: null, byModel: { sim: 64_000 } },
      outputLimits: { all: 20_000, byModel: {} },
      threshold: 0.7,
      compaction: true,
      reflectEvery: { planner: 3, worker: 3 },
      scratchpadEvery: { planner: 2, worker: null },
    });

    // Every call asks for the limit, or for what is left of the window when that is less.
    const asked = events.flatMap((event) => (event.type === 'model.requested' ? [event.data.maxOutputTokens] : []));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((tokens) => tokens !== undefined && tokens <= 20_000 && tokens >= 6_400)).toBe(true);
    expect(asked).toContain(20_000);

    const roles = new Map(events.flatMap((event) => (event.type === 'agent.started' ? [[event.agentId, event.data.role] as const] : [])));
    const nudges = events.flatMap((event) => (event.type === 'agent.nudged' && event.data.reminder !== undefined ? [{ role: roles.get(event.agentId), ...event.data }] : []));
    const reflections = nudges.filter((nudge) => nudge.reminder === 'reflect');
    // Every third step after the first: steps 4, 7, 10 and so on, for planners and workers alike.
    expect(reflections.some((nudge) => nudge.role === 'worker')).toBe(true);
    expect(reflections.some((nudge) => nudge.role === 'root-planner')).toBe(true);
    expect(reflections.every((nudge) => nudge.step > 1 && (nudge.step - 1) % 3 === 0)).toBe(true);
    // Scratchpad reminders for the planner only: the workers' are off.
    const scratchpads = nudges.filter((nudge) => nudge.reminder === 'scratchpad');
    expect(scratchpads.length).toBeGreaterThan(0);
    expect(scratchpads.every((nudge) => nudge.role === 'root-planner')).toBe(true);
  }, RUN_TIMEOUT_MS);
});
