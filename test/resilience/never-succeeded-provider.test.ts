import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { formatRunSummary } from '../../src/cli/commands/run-report.js';
import type { RecordedEvent } from '../../src/events/event-types.js';
import { startModelServer, type ModelServer } from '../../src/model/server/model-server.js';
import { createProviderGuards } from '../../src/model/resilience/provider-guard.js';
import { resolveModel } from '../../src/model/registry.js';
import { createScriptedLanguageModel } from '../../src/model/testing/scripted-language-model.js';
import { runRunSession } from '../../src/orchestrator/session/run-session.js';
import { createExampleRepository, type ExampleRepository } from '../testing/example-repository.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

/**
 * A whole run against a model server that answers every call with a 500 from the first one:
 * a server that has never worked is not waited for. The run ends, failed, after the first
 * call's few retries, and what it prints says to check --base-url and the server's logs.
 */
let repo: ExampleRepository;
let server: ModelServer;

beforeEach(async () => {
  repo = createExampleRepository('toolbox');
  server = await startModelServer({ model: createScriptedLanguageModel([]) });
  server.storm({ status: 500 }, 600_000);
});

afterEach(async () => {
  await server.close();
  repo.cleanup();
});

describeRuns('a run whose provider has never succeeded', () => {
  it('ends failed after the first call, without parking, and says to check --base-url and the server', async () => {
    const waits: number[] = [];
    const resolved = resolveModel('openai-compatible:coder', {
      baseUrl: `${server.url}/v1`,
      env: {},
      providers: createProviderGuards(),
      // The longest backoff the jitter can draw, counted instead of slept.
      random: () => 0.999,
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
    });
    if (!resolved.ok) throw new Error(resolved.error);
    const seen: RecordedEvent[] = [];
    // A park would last until the run is stopped: the first one stops it, and the checks below say why.
    const stop = new AbortController();
    const result = await runRunSession({
      repoDir: repo.dir,
      workerModel: resolved.model,
      plannerModel: resolved.model,
      settings: { goalPath: join(repo.dir, 'GOAL.md'), workers: 1, workerMaxSteps: 100, plannerMaxSteps: 1_000, sharedDependencies: false, workspaces: 'worktree' },
      signal: stop.signal,
      onEvent: (event) => {
        seen.push(event);
        if (event.type === 'agent.parked') stop.abort();
      },
    });
    if (!result.ok) throw new Error(result.error);

    expect(result.status).toBe('failed');
    expect(seen.filter((event) => event.type === 'agent.parked')).toEqual([]);
    // The root planner's one call: five attempts, the circuit opened, the sixth refused.
    expect(server.requests).toHaveLength(5);
    expect(waits.reduce((sum, ms) => sum + ms, 0)).toBeLessThan(16_000);
    const failed = seen.filter((event) => event.type === 'model.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ data: { kind: 'unreachable', attempts: 5 } });

    const printed = formatRunSummary(result, null);
    expect(printed).toContain(`run ${result.runId}: failed`);
    expect(printed).toMatch(/root planner: failed: .*has answered every call since this run started with a server error/);
    expect(printed).toContain('Check that --base-url is the address of the model API');
    expect(printed).toContain("look in the server's logs");
    // The reason's own full stop ends the handoff's sentence; no second one follows it.
    expect(printed).toContain('a server that has never worked.\n');
  }, 120_000);
});
