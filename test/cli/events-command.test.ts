import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { openSqliteEventStore } from '../../src/store/sqlite/sqlite-event-store.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

let repo: ExampleRepository;
let state: string;

beforeAll(async () => {
  repo = createExampleRepository();
  state = mkdtempSync(join(tmpdir(), 'colony-state-'));
  // Sandboxed commands run as other users: they must get through the state directory to their workspaces.
  chmodSync(state, 0o755);
  const task = join(repo.dir, 'tasks', '06-clamp.md');
  const result = await runCli(['work', task, '--repo', repo.dir, '--state', state, '--model', 'sim', '--quiet']);
  expect(result.code).toBe(0);
});

afterAll(() => {
  repo.cleanup();
  rmSync(state, { recursive: true, force: true });
});

function parse(stdout: string): ColonyEvent[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as ColonyEvent);
}

describeRuns('colony events', () => {
  it('reads a state directory given with --state, and the repository stays clean of it', async () => {
    const all = parse((await runCli(['events', '--state', state, '--json'])).stdout);
    expect(all[0]?.type).toBe('run.started');
    expect(all.at(-1)?.type).toBe('run.ended');
    expect(repo.git('status', '--porcelain', '--ignored')).toBe('');
  });

  it('prints one readable line per event', async () => {
    const result = await runCli(['events', '--state', state]);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} {2}system +run started: Clamp/);
    expect(result.stdout).toMatch(/merged [0-9a-f]{12} \(3 file\(s\), 1 attempt\(s\)\)/);
  });

  it('filters by type, agent and limit', async () => {
    const tools = parse((await runCli(['events', '--state', state, '--json', '--type', 'tool.started,tool.ended'])).stdout);
    expect(new Set(tools.map((event) => event.type))).toEqual(new Set(['tool.started', 'tool.ended']));
    const agent = tools[0]?.agentId ?? '';
    const mine = parse((await runCli(['events', '--state', state, '--json', '--agent', agent, '--limit', '3'])).stdout);
    expect(mine).toHaveLength(3);
    expect(mine.every((event) => event.agentId === agent)).toBe(true);
    const none = await runCli(['events', '--state', state, '--json', '--agent', 'nobody']);
    expect(none.stdout).toBe('');
  });

  it('filters by a window of time', async () => {
    const all = parse((await runCli(['events', '--state', state, '--json'])).stdout);
    const middle = all[Math.floor(all.length / 2)]?.ts ?? 0;
    const iso = (ts: number) => new Date(ts).toISOString();
    const before = parse((await runCli(['events', '--state', state, '--json', '--until', iso(middle)])).stdout);
    const after = parse((await runCli(['events', '--state', state, '--json', '--since', iso(middle + 1)])).stdout);
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((event) => event.ts <= middle)).toBe(true);
    expect(after.every((event) => event.ts > middle)).toBe(true);
    expect(before.length + after.length).toBe(all.length);
    const backwards = await runCli(['events', '--state', state, '--since', iso(middle), '--until', iso(middle - 1)]);
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toMatch(/--until .* is before --since/);
  });

  it('refuses an unknown type and a bad time, listing what is accepted', async () => {
    const type = await runCli(['events', '--state', state, '--type', 'tool.begun']);
    expect(type.code).toBe(2);
    expect(type.stderr).toMatch(/unknown event type tool\.begun; known types: run\.started/);
    const since = await runCli(['events', '--state', state, '--since', 'yesterday']);
    expect(since.code).toBe(2);
    expect(since.stderr).toMatch(/not a time; use ISO 8601/);
  });

  it('says where it looked when there is no event log', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'colony-empty-'));
    const result = await runCli(['events', '--repo', empty]);
    rmSync(empty, { recursive: true, force: true });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no colony event log at .*colony\.db[\s\S]*--state/);
  });

  it('follows new events as they are recorded, until stopped', async () => {
    const controller = new AbortController();
    let printed = '';
    const { main } = await import('../../src/cli/main.js');
    const following = main(['events', '--state', state, '--json', '--follow', '--type', 'run.started'], {
      stdout: (text) => (printed += text),
      stderr: () => undefined,
      env: {},
      cwd: process.cwd(),
      signal: controller.signal,
    });
    const writer = openSqliteEventStore(join(state, 'colony.db'));
    writer.append({ type: 'run.started', runId: 'run-follow', agentId: 'system', data: { mode: 'work', repo: 'r', model: 'm', title: 'late' } });
    await writer.close();
    await expect.poll(() => printed.includes('"runId":"run-follow"'), { timeout: 5000 }).toBe(true);
    controller.abort();
    expect(await following).toBe(0);
  });
});
