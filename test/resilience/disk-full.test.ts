import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../src/events/event-types.js';
import { resolveModel } from '../../src/model/registry.js';
import { SIM_MODEL_FACTORY } from '../../src/sim/sim-model-factory.js';
import { runRunSession } from '../../src/orchestrator/session/run-session.js';
import { confinedTestsUnavailable } from '../../src/sandbox/testing/confined-test-support.js';
import { createExampleRepository, type ExampleRepository } from '../testing/example-repository.js';
import { chaosProblems } from '../testing/chaos-checks.js';

/** Big enough for the run's state; the filler takes the rest. */
const DISK_BYTES = 96 * 1024 ** 2;
const cannotMount = confinedTestsUnavailable('bubblewrap');

/**
 * A real small file system (tmpfs with a size) holds the run's state. Midway through the run a
 * filler file takes every free byte; a little later it is deleted. The run must pause starting
 * agents, say so, lose nothing, and go on to finish green once there is space again.
 */
describe.skipIf(cannotMount !== null)('a run whose disk fills up', () => {
  let repo: ExampleRepository;
  let mountPoint: string;

  beforeAll(() => {
    repo = createExampleRepository('toolbox');
    mountPoint = mkdtempSync(join(tmpdir(), 'colony-small-disk-'));
    chmodSync(mountPoint, 0o755);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK_BYTES},mode=0755`, 'tmpfs', mountPoint]);
  });

  afterAll(() => {
    try {
      execFileSync('umount', ['-l', mountPoint]);
    } finally {
      rmSync(mountPoint, { recursive: true, force: true });
      repo.cleanup();
    }
  });

  it('pauses new agents while it is full, says so, and finishes green once space returns', { timeout: 300_000 }, async () => {
    const model = resolveModel('sim?seed=3&latency=20..80', { env: {} }, { sim: SIM_MODEL_FACTORY });
    if (!model.ok) throw new Error(model.error);
    const stateDir = join(mountPoint, 'state');
    mkdirSync(stateDir);
    const filler = join(mountPoint, 'filler');
    let filled = false;
    let landed = 0;
    const fill = (): void => {
      filled = true;
      const descriptor = openSync(filler, 'w');
      const chunk = Buffer.alloc(1024 * 1024, 1);
      try {
        for (;;) writeSync(descriptor, chunk);
      } catch {
        // ENOSPC: every byte is taken.
      } finally {
        closeSync(descriptor);
      }
      setTimeout(() => rmSync(filler, { force: true }), 3_000);
    };
    const onEvent = (event: RecordedEvent): void => {
      if (event.type === 'merge.landed') landed += 1;
      if (!filled && landed === 2) fill();
    };
    const result = await runRunSession({
      repoDir: repo.dir,
      workerModel: model.model,
      plannerModel: model.model,
      settings: {
        goalPath: join(repo.dir, 'GOAL.md'),
        workers: 3,
        workerMaxSteps: 100,
        plannerMaxSteps: 1_000,
        sharedDependencies: false,
        workspaces: 'worktree',
      },
      stateDir,
      onEvent,
    });
    if (!result.ok) throw new Error(result.error);
    expect(filled).toBe(true);
    expect(result.status).toBe('done');

    const { default: Database } = await import('better-sqlite3');
    const reader = new Database(join(stateDir, 'colony.db'), { readonly: true });
    const events = reader.prepare('SELECT seq, type FROM events WHERE run_id = ? ORDER BY seq').all(result.runId) as { seq: number; type: string }[];
    reader.close();
    const full = events.find((event) => event.type === 'disk.full');
    const recovered = events.find((event) => event.type === 'disk.recovered');
    expect(full).toBeDefined();
    expect(recovered).toBeDefined();
    if (full === undefined || recovered === undefined) return;
    expect(recovered.seq).toBeGreaterThan(full.seq);
    // While it was full, no agent started.
    const startedWhileFull = events.filter((event) => event.seq > full.seq && event.seq < recovered.seq && (event.type === 'task.claimed' || event.type === 'agent.started'));
    expect(startedWhileFull).toEqual([]);
    // Nothing recorded was lost or doubled, and the run's work is whole.
    expect(await chaosProblems(repo.dir, stateDir, result.runId)).toEqual([]);
  });
});
