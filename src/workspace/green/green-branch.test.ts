import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { advanceGreenBranch, commitSubject, commitsBetween, tagGreen } from './green-branch.js';
import { createMergeTestSetup, type MergeTestSetup } from '../testing/merge-setup.js';

let setup: MergeTestSetup;
/** Commits on main after Start, oldest first. */
let commits: string[];
let start: string;

async function refOf(ref: string): Promise<string | null> {
  const listed = (await setup.temporary.git(['for-each-ref', '--format=%(objectname)', ref])).trim();
  return listed === '' ? null : listed;
}

/** A commit off `parent` that main does not contain. */
async function sideCommit(parent: string, name: string): Promise<string> {
  return (await setup.temporary.git(['commit-tree', `${parent}^{tree}`, '-p', parent, '-m', name])).trim();
}

beforeEach(async () => {
  setup = await createMergeTestSetup();
  start = await setup.mainCommit();
  commits = [];
  for (let step = 1; step <= 3; step += 1) {
    await setup.temporary.write('step.txt', `${step}\n`);
    commits.push(await setup.temporary.commitAll(`Step ${step}`));
  }
});

afterEach(async () => {
  await setup.temporary.remove();
});

function at(index: number): string {
  const commit = commits[index];
  if (commit === undefined) throw new Error(`no commit ${index}`);
  return commit;
}

describe('advanceGreenBranch', () => {
  it('makes the branch when it is missing', async () => {
    expect(await advanceGreenBranch(setup.repo, { branch: 'green', to: at(0) })).toEqual({ ok: true, from: null, moved: true });
    expect(await refOf('refs/heads/green')).toBe(at(0));
  });

  it('moves the branch forward, and leaves it where it already is', async () => {
    await advanceGreenBranch(setup.repo, { branch: 'green', to: at(0) });
    expect(await advanceGreenBranch(setup.repo, { branch: 'green', to: at(2) })).toEqual({ ok: true, from: at(0), moved: true });
    expect(await refOf('refs/heads/green')).toBe(at(2));
    expect(await advanceGreenBranch(setup.repo, { branch: 'green', to: at(2) })).toEqual({ ok: true, from: at(2), moved: false });
    expect(await refOf('refs/heads/green')).toBe(at(2));
  });

  it('takes a revision for the commit and records the full id', async () => {
    expect(await advanceGreenBranch(setup.repo, { branch: 'green', to: 'main~1' })).toMatchObject({ ok: true, moved: true });
    expect(await refOf('refs/heads/green')).toBe(at(1));
  });

  it('refuses a commit that is not a descendant of the branch (sideways), and leaves the branch', async () => {
    const side = await sideCommit(at(0), 'Someone else');
    await setup.temporary.git(['update-ref', 'refs/heads/green', side]);
    const result = await advanceGreenBranch(setup.repo, { branch: 'green', to: at(2) });
    expect(result.ok).toBe(false);
    const reason = result.ok ? '' : result.error;
    expect(reason).toContain(`green points at ${side.slice(0, 12)} ("Someone else")`);
    expect(reason).toContain('diverged');
    expect(reason).toContain('only moves green forward');
    expect(reason).toContain('git branch -D green');
    expect(reason).toContain(`git branch -f green ${at(2).slice(0, 12)}`);
    expect(await refOf('refs/heads/green')).toBe(side);
  });

  it('refuses an older commit (backwards), and leaves the branch', async () => {
    await advanceGreenBranch(setup.repo, { branch: 'green', to: at(2) });
    const result = await advanceGreenBranch(setup.repo, { branch: 'green', to: at(0) });
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.error).toContain(`which already comes after ${at(0).slice(0, 12)}`);
    expect(await refOf('refs/heads/green')).toBe(at(2));
  });

  it('refuses names git does not take for a branch, and the trunk itself', async () => {
    for (const branch of ['bad..name', 'HEAD', '-x', 'with space', '@{-1}', 'main']) {
      const result = await advanceGreenBranch(setup.repo, { branch, to: at(2) });
      expect(result.ok, branch).toBe(false);
      expect(result.ok ? '' : result.error).toContain('Choose another name for the green branch');
    }
    expect(await refOf('refs/heads/main')).toBe(at(2));
    expect((await setup.temporary.git(['for-each-ref', '--format=%(refname)', 'refs/heads/'])).trim()).toBe('refs/heads/main');
  });

  it('refuses a commit that does not exist', async () => {
    const result = await advanceGreenBranch(setup.repo, { branch: 'green', to: 'f'.repeat(40) });
    expect(result.ok ? '' : result.error).toContain('no such commit');
    expect(await refOf('refs/heads/green')).toBeNull();
  });

  it('refuses to move a branch checked out in a checkout', async () => {
    await advanceGreenBranch(setup.repo, { branch: 'green', to: at(0) });
    const checkout = join(setup.temporary.base, 'green-checkout');
    await setup.temporary.git(['worktree', 'add', '--quiet', checkout, 'green']);
    const result = await advanceGreenBranch(setup.repo, { branch: 'green', to: at(2) });
    expect(result.ok ? '' : result.error).toContain(`checked out in ${checkout}`);
    expect(await refOf('refs/heads/green')).toBe(at(0));
  });

  it('says git could not write the branch when its lock is held, rather than blaming a race', async () => {
    await advanceGreenBranch(setup.repo, { branch: 'green', to: at(0) });
    writeFileSync(join(setup.repo.gitDir, 'refs', 'heads', 'green.lock'), '');
    const result = await advanceGreenBranch(setup.repo, { branch: 'green', to: at(2) });
    const reason = result.ok ? '' : result.error;
    expect(reason).toMatch(new RegExp(`^colony could not move green from ${at(0).slice(0, 12)} to ${at(2).slice(0, 12)}: fatal: .*cannot lock ref 'refs/heads/green': .*green\\.lock`));
    expect(await refOf('refs/heads/green')).toBe(at(0));
  });

  it('refuses a symbolic ref instead of moving the branch it names', async () => {
    await setup.temporary.git(['branch', 'other', at(0)]);
    await setup.temporary.git(['symbolic-ref', 'refs/heads/green', 'refs/heads/other']);
    const result = await advanceGreenBranch(setup.repo, { branch: 'green', to: at(2) });
    expect(result.ok ? '' : result.error).toContain('is a symbolic ref to refs/heads/other');
    expect(await refOf('refs/heads/other')).toBe(at(0));
  });
});

/**
 * A `git` first on PATH that, once armed, moves a ref with the real git just before colony's
 * next `update-ref` runs: another process moving the branch between colony's read and its write.
 */
describe('refs moved by another process between the read and the write', () => {
  let wrapperDir: string;
  let armFile: string;
  const originalPath = process.env.PATH ?? '';

  beforeAll(() => {
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    wrapperDir = mkdtempSync(join(tmpdir(), 'colony-racing-git-'));
    armFile = join(wrapperDir, 'armed');
    const script = [
      '#!/bin/sh',
      'for argument in "$@"; do',
      `  if [ "$argument" = update-ref ] && [ -f '${armFile}' ]; then`,
      `    race=$(cat '${armFile}'); rm -f '${armFile}'`,
      `    '${realGit}' update-ref $race || exit 99`,
      '    break',
      '  fi',
      'done',
      `exec '${realGit}' "$@"`,
      '',
    ].join('\n');
    writeFileSync(join(wrapperDir, 'git'), script);
    chmodSync(join(wrapperDir, 'git'), 0o755);
    process.env.PATH = `${wrapperDir}:${originalPath}`;
  });

  afterAll(() => {
    process.env.PATH = originalPath;
    rmSync(wrapperDir, { recursive: true, force: true });
  });

  /** Has the wrapper run `git update-ref <ref> <commit>` before colony's next update-ref. */
  function moveBeforeNextWrite(ref: string, commit: string): void {
    writeFileSync(armFile, `${ref} ${commit}`);
  }

  it('refuses when someone moved the branch meanwhile, and leaves it where they put it', async () => {
    await advanceGreenBranch(setup.repo, { branch: 'green', to: at(0) });
    const side = await sideCommit(at(0), 'Moved by hand');
    moveBeforeNextWrite('refs/heads/green', side);
    const result = await advanceGreenBranch(setup.repo, { branch: 'green', to: at(2) });
    expect(existsSync(armFile)).toBe(false);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.error).toContain(`moved it to ${side.slice(0, 12)} while colony was moving green from ${at(0).slice(0, 12)}`);
    expect(await refOf('refs/heads/green')).toBe(side);
  });

  it('refuses to overwrite a branch someone made meanwhile', async () => {
    moveBeforeNextWrite('refs/heads/green', at(1));
    const result = await advanceGreenBranch(setup.repo, { branch: 'green', to: at(2) });
    expect(result.ok ? '' : result.error).toContain(`moved it to ${at(1).slice(0, 12)} while colony was moving green from nothing`);
    expect(await refOf('refs/heads/green')).toBe(at(1));
  });

  it('skips a tag number someone took meanwhile, never moving their tag', async () => {
    expect(await tagGreen(setup.repo, { prefix: 'green', commit: at(0) })).toEqual({ ok: true, tag: 'green-1' });
    moveBeforeNextWrite('refs/tags/green-2', start);
    expect(await tagGreen(setup.repo, { prefix: 'green', commit: at(2) })).toEqual({ ok: true, tag: 'green-3' });
    expect(await refOf('refs/tags/green-2')).toBe(start);
    expect(await refOf('refs/tags/green-3')).toBe(at(2));
  });
});

describe('tagGreen', () => {
  it('numbers tags from 1, one more than the highest, without moving any', async () => {
    expect(await tagGreen(setup.repo, { prefix: 'green', commit: at(0) })).toEqual({ ok: true, tag: 'green-1' });
    expect(await tagGreen(setup.repo, { prefix: 'green', commit: at(1) })).toEqual({ ok: true, tag: 'green-2' });
    // Tags that only look alike do not count; a gap is not filled.
    for (const name of ['green-7', 'green-x', 'greenish-40', 'green-9-old', 'other-green-12']) await setup.temporary.git(['tag', name, start]);
    expect(await tagGreen(setup.repo, { prefix: 'green', commit: at(2) })).toEqual({ ok: true, tag: 'green-8' });
    expect(await refOf('refs/tags/green-1')).toBe(at(0));
    expect(await refOf('refs/tags/green-2')).toBe(at(1));
    expect(await refOf('refs/tags/green-7')).toBe(start);
    expect(await refOf('refs/tags/green-8')).toBe(at(2));
  });

  it('takes a prefix with characters special to a pattern literally', async () => {
    await setup.temporary.git(['tag', 'ok+green-5', start]);
    await setup.temporary.git(['tag', 'okkgreen-9', start]);
    expect(await tagGreen(setup.repo, { prefix: 'ok+green', commit: at(0) })).toEqual({ ok: true, tag: 'ok+green-6' });
  });

  it('refuses a prefix git cannot take, and a commit that does not exist', async () => {
    expect((await tagGreen(setup.repo, { prefix: 'bad..prefix', commit: at(0) })).ok).toBe(false);
    expect((await tagGreen(setup.repo, { prefix: '', commit: at(0) })).ok).toBe(false);
    const missing = await tagGreen(setup.repo, { prefix: 'green', commit: 'e'.repeat(40) });
    expect(missing.ok ? '' : missing.error).toContain('no such commit');
    expect((await setup.temporary.git(['tag', '--list'])).trim()).toBe('');
  });
});

describe('commitsBetween and commitSubject', () => {
  it('lists the commits after good up to bad, oldest first, all of them when good is null', async () => {
    expect(await commitsBetween(setup.repo, at(0), at(2))).toEqual([at(1), at(2)]);
    expect(await commitsBetween(setup.repo, at(2), at(2))).toEqual([]);
    expect(await commitsBetween(setup.repo, null, at(2))).toEqual([start, ...commits]);
    expect(await commitSubject(setup.repo, at(1))).toBe('Step 2');
  });

  it('follows the first-parent line through a merge', async () => {
    await setup.temporary.git(['switch', '--quiet', '-c', 'feature', at(0)]);
    await setup.temporary.write('feature.txt', 'a\n');
    const featureOne = await setup.temporary.commitAll('Feature one');
    await setup.temporary.write('feature.txt', 'b\n');
    await setup.temporary.commitAll('Feature two');
    await setup.temporary.git(['switch', '--quiet', 'main']);
    await setup.temporary.git(['merge', '--quiet', '--no-ff', '-m', 'Merge feature', 'feature']);
    const merge = await setup.mainCommit();
    const between = await commitsBetween(setup.repo, at(0), merge);
    expect(between).toEqual([at(1), at(2), merge]);
    expect(between).not.toContain(featureOne);
    expect(await commitSubject(setup.repo, merge)).toBe('Merge feature');
  });

  it('throws when git cannot list them', async () => {
    await expect(commitsBetween(setup.repo, null, 'd'.repeat(40))).rejects.toThrow(/git rev-list/);
    await expect(commitSubject(setup.repo, 'd'.repeat(40))).rejects.toThrow(/git log/);
  });
});
