import { describe, expect, it } from 'vitest';
import type { CleanReport } from '../../orchestrator/session/clean-session.js';
import { describeClean } from './clean-report.js';

const NOTHING: CleanReport = {
  stateDir: '/r/.colony',
  found: true,
  mounts: 0,
  workspaces: 0,
  worktreeRecords: 0,
  bytes: 0,
  kept: [],
  problems: [],
  prunedRefs: [],
  abandoned: null,
  keptForResume: null,
  movedTo: null,
  salvaged: [],
};

describe('describeClean', () => {
  it('says when there was nothing to clean, or no state directory at all', () => {
    expect(describeClean(NOTHING)).toEqual(['Nothing to clean in /r/.colony.']);
    expect(describeClean({ ...NOTHING, found: false })).toEqual(['Nothing to clean: there is no state directory at /r/.colony.']);
  });

  it('counts what went in one line, in the singular where there was one, then what was pruned and abandoned', () => {
    const report = { ...NOTHING, mounts: 2, workspaces: 1, worktreeRecords: 3, bytes: 3 * 1024 * 1024, prunedRefs: ['refs/colony/salvaged/worker-a'], abandoned: 'run-x' };
    expect(describeClean(report)).toEqual([
      'Cleaned /r/.colony: 2 overlay mounts unmounted, 1 workspace removed, 3 worktree records removed, 1 salvage ref pruned, 3 MB freed.',
      'Pruned refs/colony/salvaged/worker-a.',
      'The run run-x is recorded as abandoned: colony resume has nothing to take up; colony run GOAL.md starts a new run.',
    ]);
  });

  it('names what it kept for a resume, what it kept and why, and what it could not do', () => {
    const report = { ...NOTHING, bytes: 4096, keptForResume: 'run-y ("Pad", stopped)', kept: [{ path: '/w/worker-b', reason: 'git cannot read it' }], problems: ['umount failed'] };
    expect(describeClean(report)).toEqual([
      'Cleaned /r/.colony: 4 KB freed.',
      'Kept for colony resume: the workspaces and spill files of the unfinished run run-y ("Pad", stopped). colony clean --stopped removes them too, and the run is then abandoned.',
      'Kept /w/worker-b: git cannot read it',
      'Not cleaned: umount failed',
    ]);
  });

  it('says where a damaged state directory went and where its work is kept', () => {
    const report = { ...NOTHING, mounts: 1, worktreeRecords: 2, movedTo: '/r/.colony.damaged-2', salvaged: ['refs/colony/salvaged/worker-c'] };
    expect(describeClean(report)).toEqual([
      'Moved the damaged state directory /r/.colony aside to /r/.colony.damaged-2, kept as it was and out of git status (1 overlay mount unmounted, 2 worktree records removed). The next colony run starts a new run.',
      'Work of its workspaces that main lacks is kept as refs/colony/salvaged/worker-c (look with git log refs/colony/salvaged/worker-c).',
    ]);
  });
});
