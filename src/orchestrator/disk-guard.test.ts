import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryEventStore } from '../store/events/memory-event-store.js';
import { createDiskGuard } from './disk-guard.js';

let base: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'colony-disk-guard-'));
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

describe('the disk guard', () => {
  it('lets the runner start agents while the state directory is the one the run started with, and stops it, saying why, once it is not', async () => {
    const stateDir = join(base, 'state');
    mkdirSync(stateDir);
    const guard = createDiskGuard({ events: createMemoryEventStore(), path: stateDir, record: () => undefined, now: () => 0, reserveBytes: 0 });
    expect(await guard.canStartAgents()).toBe(true);
    rmSync(stateDir, { recursive: true });
    const gone = `the state directory ${stateDir} was deleted while the run went on, and the run's event log and workspaces with it, so the run stops`;
    await expect(guard.canStartAgents()).rejects.toThrow(gone);
  });

  it('stops it too when the event log is deleted and the directory stays, held by a mount in it', async () => {
    const stateDir = join(base, 'state');
    mkdirSync(join(stateDir, 'workspaces', 'busy'), { recursive: true });
    writeFileSync(join(stateDir, 'colony.db'), '');
    const guard = createDiskGuard({ events: createMemoryEventStore(), path: stateDir, logPath: join(stateDir, 'colony.db'), record: () => undefined, now: () => 0, reserveBytes: 0 });
    expect(await guard.canStartAgents()).toBe(true);
    rmSync(join(stateDir, 'colony.db'));
    await expect(guard.canStartAgents()).rejects.toThrow(`the state directory ${stateDir} was deleted while the run went on`);
  });
});
