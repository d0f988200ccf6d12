import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventBody } from '../../events/event-types.js';
import { DEFAULT_SANDBOX_GID, DEFAULT_SANDBOX_UID_BASE } from '../../sandbox/sandbox.js';
import { agentBlockedAt, blockedPathProblem, lateRecorder, runIdentities } from './command-sandbox.js';

describe("a run's sandbox identities", () => {
  it('gives runs their own gid and uid range, all below what bubblewrap can map', () => {
    const ids = ['run-a1b2c3d4', 'run-e5f6g7h8', 'run-zzzzzzzz', 'run-00000000'].map(runIdentities);
    expect(new Set(ids.map((id) => id.gid)).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.uidBase)).size).toBe(ids.length);
    for (const id of ids) {
      expect(id.gid).toBeGreaterThan(DEFAULT_SANDBOX_GID);
      expect(id.uidBase).toBeGreaterThanOrEqual(DEFAULT_SANDBOX_UID_BASE);
      // A run's agents take uids from its base up; a thousand of them still stay below 2^31.
      expect(id.uidBase + 1_000).toBeLessThan(2 ** 31);
      expect(id.gid).toBeLessThan(2 ** 31);
    }
    expect(runIdentities('run-a1b2c3d4')).toEqual(ids[0]);
  });
});

describe('lateRecorder', () => {
  it('keeps what is recorded before attach, in order, and passes the rest straight on', () => {
    const late = lateRecorder();
    const seen: EventBody[] = [];
    const first: EventBody = { type: 'network.requested', data: { host: 'a', port: 1, allowed: true } };
    const second: EventBody = { type: 'network.requested', data: { host: 'b', port: 2, allowed: false } };
    late.record(first);
    late.record(second);
    expect(seen).toEqual([]);
    late.attach((event) => seen.push(event));
    expect(seen).toEqual([first, second]);
    const third: EventBody = { type: 'network.requested', data: { host: 'c', port: 3, allowed: true } };
    late.record(third);
    expect(seen).toEqual([first, second, third]);
  });
});

describe('where agents running as other uids are stopped', () => {
  it('by a private directory above the repository only where the sandbox cannot cover it, and by a git directory they may not enter always', () => {
    const base = mkdtempSync(join(tmpdir(), 'colony-blocked-'));
    try {
      chmodSync(base, 0o755);
      const privateDir = join(base, 'private');
      const gitDir = join(privateDir, 'repo', '.git');
      const stateDir = join(gitDir, 'colony');
      mkdirSync(stateDir, { recursive: true });
      chmodSync(privateDir, 0o700);
      expect(agentBlockedAt(7, stateDir, gitDir, true)).toBeNull();
      expect(agentBlockedAt(7, stateDir, gitDir, false)).toBe(privateDir);
      expect(blockedPathProblem(privateDir).fix).toContain(`\`chmod o+x ${privateDir}\``);
      // The run's group may pass where the directory is the group's, with g+x.
      chmodSync(privateDir, 0o710);
      expect(agentBlockedAt(statSync(privateDir).gid, stateDir, gitDir, false)).toBeNull();
      chmodSync(gitDir, 0o700);
      expect(agentBlockedAt(7, stateDir, gitDir, true)).toBe(gitDir);
      expect(blockedPathProblem(gitDir, true)).toEqual({
        error: `the agents run as other users, who may not enter the repository's git directory ${gitDir} (only its owner may), and every workspace reads it`,
        fix: `let others in with \`chmod o+rx ${gitDir}\`, or keep the repository somewhere they can read`,
      });
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
