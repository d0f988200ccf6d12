import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRepository, type Repository } from '../git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../testing/temporary-repository.js';
import { chooseTrunk, defaultGreenBranch, dropUnusedTrunk, goalSlug, makeTrunk, recordedTrunk, type ChooseTrunkResult, type ChosenTrunk } from './trunk-branch.js';

function chosenOf(result: ChooseTrunkResult): ChosenTrunk {
  if (!result.ok) throw new Error(result.error);
  return result.chosen;
}

describe('goalSlug', () => {
  it('makes a short branch-safe name from a goal title, cut at a word', () => {
    expect(goalSlug('text-kit')).toBe('text-kit');
    expect(goalSlug('Build the Parser: tokens & AST!')).toBe('build-the-parser-tokens-ast');
    expect(goalSlug('Café crème')).toBe('cafe-creme');
    expect(goalSlug('a very long goal title that goes on and on past forty characters')).toBe('a-very-long-goal-title-that-goes-on-and');
    expect(goalSlug('x'.repeat(60))).toBe('x'.repeat(40));
    expect(goalSlug('!!! ???')).toBe('run');
  });
});

describe('chooseTrunk', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  let head: string;
  beforeEach(async () => {
    temporary = await createTemporaryRepository();
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
    head = (await temporary.git(['rev-parse', 'HEAD'])).trim();
  });
  afterEach(async () => {
    await temporary.remove();
  });

  const branches = async () => (await temporary.git(['branch', '--format=%(refname:short)'])).trim().split('\n');

  it('gives a run a branch of its own named from the goal, made only by makeTrunk, at the commit checked out', async () => {
    const chosen = chosenOf(await chooseTrunk(repo, null, 'Text kit'));
    expect(chosen).toMatchObject({ trunk: 'colony/text-kit', made: true, commit: head });
    expect(chosen.repo).toMatchObject({ mainBranch: 'colony/text-kit', checkedOutBranch: 'main' });
    expect(await branches()).toEqual(['main']);
    expect(await makeTrunk(chosen)).toEqual({ ok: true });
    expect(await branches()).toEqual(['colony/text-kit', 'main']);
    expect((await temporary.git(['rev-parse', 'colony/text-kit'])).trim()).toBe(head);
    expect((await temporary.git(['symbolic-ref', 'HEAD'])).trim()).toBe('refs/heads/main');
    expect(defaultGreenBranch(chosen.repo)).toBe('colony/text-kit-green');
  });

  it('drops a branch it made when nothing landed on it, with its green branch, and keeps one that moved', async () => {
    const empty = chosenOf(await chooseTrunk(repo, null, 'empty'));
    await makeTrunk(empty);
    await temporary.git(['branch', 'colony/empty-green', head]);
    expect(await dropUnusedTrunk(empty)).toBe(true);
    expect(await branches()).toEqual(['main']);
    const used = chosenOf(await chooseTrunk(repo, null, 'used'));
    await makeTrunk(used);
    await temporary.git(['switch', '--quiet', 'colony/used']);
    await temporary.write('landed.txt', 'landed\n');
    await temporary.commitAll('Landed');
    await temporary.git(['switch', '--quiet', 'main']);
    expect(await dropUnusedTrunk(used)).toBe(false);
    expect(await dropUnusedTrunk(chosenOf(await chooseTrunk(repo, 'main', 'goal')))).toBe(false);
    expect(await branches()).toEqual(['colony/used', 'main']);
  });

  it('numbers the name when a branch of that name is there, and never moves the one there', async () => {
    await temporary.git(['branch', 'colony/text-kit']);
    await temporary.git(['branch', 'colony/text-kit-2']);
    const chosen = chosenOf(await chooseTrunk(repo, null, 'text-kit'));
    expect(chosen.trunk).toBe('colony/text-kit-3');
  });

  it('refuses to make a branch that someone made between the choice and the making', async () => {
    const chosen = chosenOf(await chooseTrunk(repo, null, 'text-kit'));
    await temporary.write('later.txt', 'later\n');
    await temporary.git(['switch', '--quiet', '-c', 'side']);
    const other = await temporary.commitAll('Later');
    await temporary.git(['branch', 'colony/text-kit', other]);
    const made = await makeTrunk(chosen);
    expect(made).toEqual({ ok: false, error: expect.stringContaining('could not make the branch colony/text-kit') });
    expect((await temporary.git(['rev-parse', 'colony/text-kit'])).trim()).toBe(other);
  });

  it('takes --trunk as given: the branch checked out, an existing one, or a new one from the commit checked out', async () => {
    const checkedOut = chosenOf(await chooseTrunk(repo, 'main', 'goal'));
    expect(checkedOut).toMatchObject({ trunk: 'main', made: false, commit: head });
    expect(defaultGreenBranch(checkedOut.repo)).toBe('green');
    await temporary.git(['branch', 'release']);
    expect(chosenOf(await chooseTrunk(repo, 'release', 'goal'))).toMatchObject({ trunk: 'release', made: false });
    expect(chosenOf(await chooseTrunk(repo, 'feature/new', 'goal'))).toMatchObject({ trunk: 'feature/new', made: true, commit: head });
  });

  it('refuses a name git does not take, and a branch checked out in another worktree', async () => {
    expect(await chooseTrunk(repo, 'bad..name', 'goal')).toEqual({ ok: false, error: expect.stringContaining('is not a name git takes for a branch') });
    expect(await chooseTrunk(repo, '-f', 'goal')).toEqual({ ok: false, error: expect.stringContaining('is not a name git takes') });
    await temporary.git(['worktree', 'add', '--quiet', '-b', 'busy', `${temporary.base}/other`]);
    const refused = await chooseTrunk(repo, 'busy', 'goal');
    expect(refused).toEqual({ ok: false, error: expect.stringContaining(`checked out in ${temporary.base}/other`) });
  });
});

describe('recordedTrunk', () => {
  let temporary: TemporaryRepository;
  let repo: Repository;
  beforeEach(async () => {
    temporary = await createTemporaryRepository();
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    repo = opened.repo;
  });
  afterEach(async () => {
    await temporary.remove();
  });

  it('is the branch a run recorded, or the branch checked out for a run recorded before runs had one', async () => {
    await temporary.git(['branch', 'colony/goal']);
    expect(chosenOf(await recordedTrunk(repo, 'colony/goal'))).toMatchObject({ trunk: 'colony/goal', made: false });
    expect(chosenOf(await recordedTrunk(repo, null))).toMatchObject({ trunk: 'main', made: false });
  });

  it('says how to go on when the recorded branch was deleted', async () => {
    expect(await recordedTrunk(repo, 'colony/gone')).toEqual({ ok: false, error: expect.stringContaining('colony/gone, and that branch no longer exists') });
  });
});
