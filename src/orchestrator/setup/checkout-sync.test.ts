import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRepository, type Repository } from '../../workspace/git/repository.js';
import { repairCheckout, startCheckoutSync } from './checkout-sync.js';

let dir: string;
let repo: Repository;

function git(...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@colony.invalid', ...args], { cwd: dir, encoding: 'utf8' }).trim();
}

/** Moves main to a new commit adding `file`, the way colony lands work: without touching the checkout. */
function landBehindTheCheckout(file: string, content: string): string {
  const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, input: content, encoding: 'utf8' }).trim();
  const parent = git('rev-parse', 'main');
  const tree = execFileSync('git', ['mktree'], {
    cwd: dir,
    input: `${git('ls-tree', 'main')}\n100644 blob ${blob}\t${file}\n`,
    encoding: 'utf8',
  }).trim();
  const commit = git('commit-tree', tree, '-p', parent, '-m', `add ${file}`);
  git('update-ref', 'refs/heads/main', commit, parent);
  return commit;
}

function recordFile(): string {
  return join(repo.gitDir, 'colony-checkout.json');
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'colony-checkout-'));
  writeFileSync(join(dir, 'README.md'), 'hello\n');
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  const opened = await openRepository(dir);
  if (!opened.ok) throw new Error(opened.error);
  repo = opened.repo;
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('checkout sync', () => {
  it('brings the checkout up after each landing and forgets its record when in step', async () => {
    const sync = startCheckoutSync(repo, git('rev-parse', 'main'));
    expect(existsSync(recordFile())).toBe(true);
    const landed = landBehindTheCheckout('a.txt', 'A\n');
    await sync.afterLanding();
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('A\n');
    expect(JSON.parse(readFileSync(recordFile(), 'utf8'))).toMatchObject({ commit: landed });
    expect(git('status', '--porcelain')).toBe('');
    expect(await sync.finish()).toBeNull();
    expect(existsSync(recordFile())).toBe(false);
  });

  it('lets the next run repair a checkout an earlier run left behind', async () => {
    startCheckoutSync(repo, git('rev-parse', 'main'));
    landBehindTheCheckout('b.txt', 'B\n');
    // The run died here: the checkout still shows main as it was, as if b.txt were deleted.
    expect(git('status', '--porcelain')).not.toBe('');
    expect(await repairCheckout(repo)).toEqual({ ok: true });
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('B\n');
    expect(git('status', '--porcelain')).toBe('');
    expect(existsSync(recordFile())).toBe(false);
  });

  it('refuses to repair over the user\'s edits, and warns not to commit that state', async () => {
    startCheckoutSync(repo, git('rev-parse', 'main'));
    landBehindTheCheckout('c.txt', 'C\n');
    writeFileSync(join(dir, 'c.txt'), 'mine\n');
    const repaired = await repairCheckout(repo);
    expect(repaired).toMatchObject({ ok: false, error: expect.stringMatching(/Do not commit that state/) });
    expect(readFileSync(join(dir, 'c.txt'), 'utf8')).toBe('mine\n');
    expect(existsSync(recordFile())).toBe(true);
  });

  it('has nothing to repair without a record', async () => {
    expect(await repairCheckout(repo)).toEqual({ ok: true });
  });

  it('drops a damaged record when the checkout shows nothing changed: there is nothing to repair', async () => {
    startCheckoutSync(repo, git('rev-parse', 'main'));
    writeFileSync(recordFile(), '{"root": "/tr');
    expect(await repairCheckout(repo)).toEqual({ ok: true });
    expect(existsSync(recordFile())).toBe(false);
  });

  it('refuses to guess when the record is damaged over a changed checkout, and warns not to commit', async () => {
    startCheckoutSync(repo, git('rev-parse', 'main'));
    landBehindTheCheckout('d.txt', 'D\n');
    writeFileSync(recordFile(), '{"root": "/tr');
    const repaired = await repairCheckout(repo);
    expect(repaired).toMatchObject({ ok: false, error: expect.stringMatching(/is damaged[\s\S]*do not commit them[\s\S]*git reset --keep main/) });
  });
  it('carries a commit the user made meanwhile along, so it never reverts landed files', async () => {
    const sync = startCheckoutSync(repo, git('rev-parse', 'main'));
    landBehindTheCheckout('a.txt', 'A\n');
    await sync.afterLanding();
    // The user commits a file of their own from the index colony kept in step.
    writeFileSync(join(dir, 'NOTES.md'), 'mine\n');
    git('add', 'NOTES.md');
    git('commit', '-q', '-m', 'my notes');
    landBehindTheCheckout('b.txt', 'B\n');
    await sync.afterLanding();
    expect(await sync.finish()).toBeNull();
    expect(git('status', '--porcelain')).toBe('');
    expect(git('ls-tree', '-r', '--name-only', 'main').split('\n')).toEqual(['NOTES.md', 'README.md', 'a.txt', 'b.txt']);
    expect(readFileSync(join(dir, 'NOTES.md'), 'utf8')).toBe('mine\n');
  });

  it('updates from where a reset of the user\'s left the index, not from where colony left it', async () => {
    const sync = startCheckoutSync(repo, git('rev-parse', 'main'));
    landBehindTheCheckout('a.txt', 'A\n');
    landBehindTheCheckout('b.txt', 'B\n');
    await sync.afterLanding();
    git('reset', '-q', '--hard', 'HEAD~1');
    // The next landings bring b.txt back as it was (a workspace made before the reset replays it) and add c.txt.
    landBehindTheCheckout('b.txt', 'B\n');
    landBehindTheCheckout('c.txt', 'C\n');
    await sync.afterLanding();
    expect(await sync.finish()).toBeNull();
    // Every file as main has it, and nothing shows as changed: not b.txt as a staged deletion.
    expect(git('status', '--porcelain')).toBe('');
    expect(git('ls-files').split('\n')).toEqual(['README.md', 'a.txt', 'b.txt', 'c.txt']);
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('B\n');
  });
});
