import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeRepositoryObjects } from '../git/repository-objects.js';
import { openRepository, type Repository } from '../git/repository.js';
import { fetchOriginTrunk, trunkOriginOf, withOrigin, type TrunkOrigin } from '../git/trunk-origin.js';
import { createWorktreeProvider } from '../providers/worktree/worktree-provider.js';
import { createTemporaryRepository, type TemporaryRepository } from '../testing/temporary-repository.js';
import { eventRecorder } from '../testing/merge-setup.js';
import { mergeToMain, type MergeOutcome } from './merge-to-main.js';

/** The run's repository, a bare origin cloned from it, and a second host's clone of the origin. */
interface Hosts {
  readonly temporary: TemporaryRepository;
  readonly originDir: string;
  readonly origin: TrunkOrigin;
  readonly first: Repository;
  readonly second: Repository;
  originTrunk(): Promise<string>;
}

async function openOn(root: string, trunk: string, origin: TrunkOrigin): Promise<Repository> {
  const opened = await openRepository(root);
  if (!opened.ok) throw new Error(opened.error);
  return withOrigin({ ...opened.repo, mainBranch: trunk }, origin);
}

async function createHosts(): Promise<Hosts> {
  const temporary = await createTemporaryRepository({ 'README.md': '# project\n', 'log.md': '# log\n' });
  const base = await realpath(temporary.base);
  await temporary.git(['branch', 'trunk']);
  const originDir = join(base, 'origin.git');
  await temporary.git(['clone', '--quiet', '--bare', temporary.root, originDir], base);
  const secondRoot = join(base, 'second');
  await temporary.git(['clone', '--quiet', originDir, secondRoot], base);
  await temporary.git(['switch', '--quiet', '-c', 'host'], secondRoot);
  await temporary.git(['branch', 'trunk', 'origin/trunk'], secondRoot);
  const parsed = trunkOriginOf(originDir);
  if (!parsed.ok) throw new Error(parsed.error);
  return {
    temporary,
    originDir,
    origin: parsed.origin,
    first: await openOn(temporary.root, 'trunk', parsed.origin),
    second: await openOn(secondRoot, 'trunk', parsed.origin),
    originTrunk: async () => (await temporary.git(['--git-dir', originDir, 'rev-parse', 'refs/heads/trunk'])).trim(),
  };
}

function landedCommit(outcome: MergeOutcome): string {
  if (outcome.status !== 'landed') throw new Error(`expected landed, got ${JSON.stringify(outcome)}`);
  return outcome.commit;
}

describe('landing on an origin', () => {
  let hosts: Hosts;
  beforeEach(async () => {
    hosts = await createHosts();
  });
  afterEach(async () => {
    await closeRepositoryObjects(hosts.first);
    await closeRepositoryObjects(hosts.second);
    await hosts.temporary.remove();
  });

  async function workspaceOn(repo: Repository, id: string) {
    const parentDir = join(await realpath(hosts.temporary.base), `workspaces-${id}`);
    return createWorktreeProvider(repo).create({ id, parentDir });
  }

  it('lands the work of two hosts racing each other, every landing on the origin once, each host following it', async () => {
    const { temporary, first, second } = hosts;
    const merges: Promise<MergeOutcome>[] = [];
    const attempts: number[] = [];
    for (let index = 0; index < 8; index += 1) {
      const repo = index % 2 === 0 ? first : second;
      const workspace = await workspaceOn(repo, `w${index}`);
      await temporary.write(`src/file-${index}.ts`, `export const value = ${index};\n`, workspace.path);
      const recorder = eventRecorder();
      merges.push(
        mergeToMain(repo, workspace, { message: `Add file ${index}`, record: recorder.record }).then((outcome) => {
          attempts.push(recorder.events.filter((event) => event.type === 'merge.attempted').length);
          return outcome;
        }),
      );
    }
    const commits = (await Promise.all(merges)).map(landedCommit);
    const originTrunk = await hosts.originTrunk();
    const onOrigin = (await temporary.git(['--git-dir', hosts.originDir, 'log', '--format=%H', 'refs/heads/trunk'])).trim().split('\n');
    expect(new Set(commits).size).toBe(8);
    for (const commit of commits) expect(onOrigin).toContain(commit);
    const files = (await temporary.git(['--git-dir', hosts.originDir, 'ls-tree', '-r', '--name-only', originTrunk, 'src'])).trim().split('\n');
    expect(files).toHaveLength(8);
    // The two hosts raced: some pushes were refused and tried again after following the origin.
    expect(attempts.some((count) => count > 1)).toBe(true);
    // Each host's trunk is where its last landing or look left it: on the origin's history.
    for (const repo of [first, second]) {
      const local = (await temporary.git(['rev-parse', 'refs/heads/trunk'], repo.root)).trim();
      expect(onOrigin).toContain(local);
    }
  });

  it('replays onto what another host pushed between the read and the push, and lands on top of it', async () => {
    const { temporary, first, second } = hosts;
    const workspace = await workspaceOn(first, 'mine');
    await temporary.write('mine.txt', 'mine\n', workspace.path);
    const theirs = await workspaceOn(second, 'theirs');
    await temporary.write('theirs.txt', 'theirs\n', theirs.path);
    let pushedFirst: string | null = null;
    const outcome = await mergeToMain(first, workspace, {
      message: 'Mine',
      onIntent: async () => {
        // Another host lands while this one is about to push.
        if (pushedFirst === null) pushedFirst = landedCommit(await mergeToMain(second, theirs, { message: 'Theirs' }));
      },
    });
    const commit = landedCommit(outcome);
    expect(pushedFirst).not.toBeNull();
    expect(outcome.status === 'landed' && outcome.mainBefore).toBe(pushedFirst);
    expect(await hosts.originTrunk()).toBe(commit);
    expect((await temporary.git(['rev-parse', `${commit}^`])).trim()).toBe(pushedFirst);
    expect((await temporary.git(['rev-parse', 'refs/heads/trunk'])).trim()).toBe(commit);
  });

  it('refuses to follow an origin whose trunk was moved back, and loses nothing', async () => {
    const { temporary, first } = hosts;
    const landedFirst = await workspaceOn(first, 'one');
    await temporary.write('one.txt', 'one\n', landedFirst.path);
    const one = landedCommit(await mergeToMain(first, landedFirst, { message: 'One' }));
    // Someone moves the origin's trunk back past the landing, and pushes a commit of their own.
    const start = (await temporary.git(['rev-parse', `${one}^`])).trim();
    const other = (await temporary.git(['commit-tree', `${start}^{tree}`, '-p', start, '-m', 'Elsewhere'])).trim();
    await temporary.git(['push', '--quiet', '--force', hosts.originDir, `${other}:refs/heads/trunk`]);
    const next = await workspaceOn(first, 'two');
    await temporary.write('two.txt', 'two\n', next.path);
    const outcome = await mergeToMain(first, next, { message: 'Two' });
    expect(outcome.status).toBe('failed');
    expect(outcome.status === 'failed' && outcome.error).toMatch(/no longer holds .* someone moved it back/);
    // The local trunk still has the landing; the workspace still has its work.
    expect((await temporary.git(['rev-parse', 'refs/heads/trunk'])).trim()).toBe(one);
    expect(await temporary.git(['show', 'HEAD:two.txt'], next.path)).toBe('two\n');
  });
});

describe('fetching the trunk from an origin', () => {
  let hosts: Hosts;
  beforeEach(async () => {
    hosts = await createHosts();
  });
  afterEach(async () => {
    await hosts.temporary.remove();
  });

  it('gives the commit of a branch the origin has, null for one it lacks, and says when the origin cannot be reached', async () => {
    const { first, origin } = hosts;
    expect(await fetchOriginTrunk(first, origin)).toEqual({ ok: true, commit: await hosts.originTrunk() });
    expect(await fetchOriginTrunk(first, origin, 'no-such-branch')).toEqual({ ok: true, commit: null });
    const gone = await fetchOriginTrunk(first, { url: join(hosts.originDir, '..', 'gone.git'), env: {} });
    expect(gone).toEqual({ ok: false, error: expect.stringMatching(/could not fetch trunk from the origin .*gone\.git/) });
  });
});

describe('trunkOriginOf', () => {
  it('takes a password out of an https URL and gives it to git through the environment alone', () => {
    const parsed = trunkOriginOf('https://colony:s3cret%21@git.example.test/project.git');
    expect(parsed).toEqual({
      ok: true,
      origin: { url: 'https://git.example.test/project.git', env: { COLONY_ORIGIN_USER: 'colony', COLONY_ORIGIN_PASSWORD: 's3cret!' } },
      secrets: ['s3cret!'],
    });
  });

  it('keeps any other URL or path as given, and refuses an empty one', () => {
    expect(trunkOriginOf('ssh://git@host/repo.git')).toEqual({ ok: true, origin: { url: 'ssh://git@host/repo.git', env: {} }, secrets: [] });
    expect(trunkOriginOf('/srv/git/project.git')).toEqual({ ok: true, origin: { url: '/srv/git/project.git', env: {} }, secrets: [] });
    expect(trunkOriginOf('  ')).toEqual({ ok: false, error: expect.stringMatching(/origin is empty/) });
  });
});
