import { appendFile, mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { updateCheckout } from '../../src/workspace/checkout/checkout.js';
import { closeRepositoryObjects } from '../../src/workspace/git/repository-objects.js';
import { createMainView } from '../../src/workspace/checkout/main-view.js';
import { mergeToMain } from '../../src/workspace/merge/merge-to-main.js';
import { createOverlayProvider } from '../../src/workspace/providers/overlay/overlay-provider.js';
import { unmountOverlaysUnder } from '../../src/workspace/providers/overlay/overlay-mount.js';
import { probeOverlaySupport } from '../../src/workspace/providers/overlay/overlay-probe.js';
import { openRepository, type Repository } from '../../src/workspace/git/repository.js';
import { salvageWorkspace } from '../../src/workspace/salvage.js';
import { createTemporaryRepository, type TemporaryRepository } from '../../src/workspace/testing/temporary-repository.js';
import type { Workspace, WorkspaceMethod } from '../../src/workspace/workspace.js';
import type { WorkspaceProvider } from '../../src/workspace/workspace-provider.js';
import { unmergedWork } from '../../src/workspace/workspace-status.js';
import { createWorktreeProvider } from '../../src/workspace/providers/worktree/worktree-provider.js';
import {
  createMarkerTrap,
  HOSTILE_ATTRIBUTES,
  hostileSettings,
  includedConfig,
  plainGit,
  plantHooks,
  writeConfig,
  type MarkerTrap,
} from './hostile-git.js';

const overlaySupport = await probeOverlaySupport(tmpdir());
const methods: WorkspaceMethod[] = overlaySupport.ok ? ['worktree', 'overlay'] : ['worktree'];

interface Fixture {
  readonly temporary: TemporaryRepository;
  readonly repo: Repository;
  readonly provider: WorkspaceProvider;
  readonly trap: MarkerTrap;
  readonly parentDir: string;
}

async function createFixture(method: WorkspaceMethod): Promise<Fixture> {
  const temporary = await createTemporaryRepository({
    'README.md': '# project\n',
    'shared.txt': 'one\ntwo\nthree\n',
    '.gitattributes': HOSTILE_ATTRIBUTES,
    'data.proc': 'processed\n',
    'data.inc': 'included\n',
  });
  const opened = await openRepository(temporary.root);
  if (!opened.ok) throw new Error(opened.error);
  const base = await realpath(temporary.base);
  const provider = method === 'overlay' ? createOverlayProvider(opened.repo, { storageDir: join(base, 'storage') }) : createWorktreeProvider(opened.repo);
  return { temporary, repo: opened.repo, provider, trap: await createMarkerTrap(base), parentDir: join(base, 'workspaces') };
}

async function destroyFixture(fixture: Fixture): Promise<void> {
  await closeRepositoryObjects(fixture.repo);
  await unmountOverlaysUnder(fixture.parentDir).catch(() => undefined);
  await fixture.temporary.remove();
}

/** Where the hostile configuration goes: the repository's own config, or a worktree's `config.worktree`. */
type ConfigPlace = 'repository config' | 'config.worktree';

/** Plants what needs only the repository: hooks in the common git dir, attributes, an included file, and (for the repository config) the settings. */
async function plantInRepository(fixture: Fixture, place: ConfigPlace): Promise<void> {
  const { repo, trap, temporary } = fixture;
  await plantHooks(trap, join(repo.gitDir, 'hooks'), 'common-hook');
  await mkdir(join(repo.gitDir, 'info'), { recursive: true });
  await appendFile(join(repo.gitDir, 'info', 'attributes'), HOSTILE_ATTRIBUTES);
  const included = join(temporary.base, 'included.cfg');
  await writeFile(included, includedConfig(trap));
  if (place === 'repository config') {
    writeConfig(join(repo.gitDir, 'config'), hostileSettings(trap, included), repo.root);
  } else {
    writeConfig(join(repo.gitDir, 'config'), [['core.repositoryFormatVersion', '1'], ['extensions.worktreeConfig', 'true']], repo.root);
  }
}

/** Plants what needs the workspace: hooks in its own git dir and, for `config.worktree`, the settings there (with hooksPath at those hooks). */
async function plantInWorkspace(fixture: Fixture, workspace: Workspace, place: ConfigPlace): Promise<void> {
  const { trap, temporary } = fixture;
  await plantHooks(trap, join(workspace.gitDir, 'hooks'), 'admin-hook');
  if (place === 'config.worktree') {
    const settings = [...hostileSettings(trap, join(temporary.base, 'included.cfg')), ['core.hooksPath', join(workspace.gitDir, 'hooks')] as [string, string]];
    writeConfig(join(workspace.gitDir, 'config.worktree'), settings, workspace.path);
  }
}

describe.each(methods)('git safety in %s workspaces', (method) => {
  let fixture: Fixture;
  beforeEach(async () => {
    fixture = await createFixture(method);
  });
  afterEach(async () => {
    await destroyFixture(fixture);
  });

  describe.each<ConfigPlace>(['repository config', 'config.worktree'])('with hooks and programs planted in the %s', (place) => {
    it('the traps are live: plain git run in the workspace runs them', async () => {
      const { provider, trap, parentDir, temporary } = fixture;
      await plantInRepository(fixture, place);
      const workspace = await provider.create({ id: 'control', parentDir });
      await plantInWorkspace(fixture, workspace, place);
      const cwd = workspace.path;
      await writeFile(join(cwd, 'new.txt'), 'new\n');
      await writeFile(join(cwd, 'new.proc'), 'new\n');
      await writeFile(join(cwd, 'new.inc'), 'new\n');
      await writeFile(join(cwd, 'README.md'), '# edited\n');
      plainGit(['status'], cwd);
      plainGit(['diff'], cwd);
      plainGit(['diff', '--no-ext-diff'], cwd);
      plainGit(['add', 'new.txt', 'new.inc'], cwd);
      plainGit(['add', 'new.proc'], cwd);
      plainGit(['commit', '-m', 'by hand'], cwd);
      plainGit(['commit', '--allow-empty'], cwd);
      plainGit(['credential', 'fill'], cwd, 'protocol=https\nhost=example.invalid\n\n');
      plainGit(['ls-remote', 'ssh://example.invalid/repository'], cwd);
      // A conflicting change on main, and the same line changed in the workspace: a rebase runs the merge driver.
      await temporary.write('shared.txt', 'one\ntrunk\nthree\n');
      await temporary.commitAll('Trunk changes line two');
      await writeFile(join(cwd, 'shared.txt'), 'one\nworkspace\nthree\n');
      plainGit(['-c', 'commit.gpgSign=false', 'commit', '--no-verify', '-am', 'Workspace changes line two'], cwd);
      plainGit(['rebase', 'main'], cwd);
      const hookPrefix = place === 'config.worktree' ? 'admin-hook' : 'common-hook';
      expect(await trap.fired()).toEqual(
        expect.arrayContaining([
          'fsmonitor',
          'filter-clean',
          'filter-process',
          'filter-included',
          `${hookPrefix}-pre-commit`,
          'gpg-program',
          'editor',
          'diff-command',
          'diff-textconv',
          'credential-helper',
          'ssh-command',
          'merge-driver',
        ]),
      );
    });

    it('runs none of them when colony creates, lands, settles a conflict, salvages, inspects and removes a workspace', async () => {
      const { provider, trap, parentDir, temporary, repo } = fixture;
      await plantInRepository(fixture, place);
      const startCommit = (await temporary.git(['rev-parse', 'HEAD'])).trim();
      const workspace = await provider.create({ id: 'worker', parentDir });
      await plantInWorkspace(fixture, workspace, place);
      const cwd = workspace.path;

      // A clean landing (in-process), with files every driver applies to.
      await writeFile(join(cwd, 'README.md'), '# project, edited\n');
      await writeFile(join(cwd, 'new.proc'), 'new process\n');
      await writeFile(join(cwd, 'new.inc'), 'new include\n');
      const landed = await mergeToMain(repo, workspace, { message: 'Edit the readme' });
      expect(landed).toMatchObject({ status: 'landed' });
      // The filters did not run: what landed is the bytes the agent wrote.
      expect(await temporary.git(['show', 'main:new.proc'])).toBe('new process\n');

      // A real conflict: git's rebase, where the merge driver would run.
      await temporary.write('shared.txt', 'one\ntrunk\nthree\n');
      await temporary.commitAll('Trunk changes line two');
      await writeFile(join(cwd, 'shared.txt'), 'one\nworkspace\nthree\n');
      const conflicted = await mergeToMain(repo, workspace, { message: 'Change line two' });
      expect(conflicted).toMatchObject({ status: 'conflicted', files: ['shared.txt'] });
      expect(await readFile(join(cwd, 'shared.txt'), 'utf8')).toMatch(/^<<<<<<< .*\ntrunk\n=======\nworkspace\n>>>>>>> /m);
      await writeFile(join(cwd, 'shared.txt'), 'one\ntrunk and workspace\nthree\n');
      expect(await mergeToMain(repo, workspace, { message: 'Change line two' })).toMatchObject({ status: 'landed' });

      // Status, salvage and removal of a workspace holding uncommitted work.
      expect(await unmergedWork(repo, workspace)).toBeNull();
      await writeFile(join(cwd, 'unsaved.txt'), 'not committed\n');
      expect(await unmergedWork(repo, workspace)).toMatchObject({ status: 'unlanded', uncommittedFiles: ['unsaved.txt'] });
      expect(await salvageWorkspace(repo, workspace, 'The worker stopped.')).toMatchObject({ ok: true, files: ['unsaved.txt'] });
      expect(await provider.remove(workspace, { deleteBranch: false })).toEqual({ removed: true });

      // The user's checkout follows main (checkout, where smudge filters and post-checkout run).
      await temporary.git(['reset', '--quiet', '--hard', startCommit]);
      expect(await updateCheckout(repo, startCommit)).toMatchObject({ ok: true });

      expect(await trap.fired()).toEqual([]);
    });
  });
});

describe('git safety when the agent tampers with the workspace’s .git', () => {
  let fixture: Fixture;
  beforeEach(async () => {
    fixture = await createFixture('worktree');
  });
  afterEach(async () => {
    await destroyFixture(fixture);
  });

  /**
   * Makes a repository of the agent's own in the workspace, its hooks and config all traps:
   * a checkout at `directory`, or with `bare` a git directory there for a `.git` file to name.
   */
  async function agentRepository(workspace: Workspace, directory: string, bare = false): Promise<string> {
    const { trap, temporary } = fixture;
    expect(plainGit(['init', '--quiet', ...(bare ? ['--bare'] : []), directory], workspace.path).code).toBe(0);
    const gitDir = bare ? join(workspace.path, directory) : join(workspace.path, directory, '.git');
    await plantHooks(trap, join(gitDir, 'hooks'), 'agent-hook');
    const included = join(temporary.base, 'included.cfg');
    await writeFile(included, includedConfig(trap));
    writeConfig(join(gitDir, 'config'), [...hostileSettings(trap, included), ['core.bare', 'false']], workspace.path);
    return gitDir;
  }

  /** What colony does with a finished workspace, and what must hold whatever the agent did to its `.git`. */
  async function expectColonyUnmoved(workspace: Workspace): Promise<void> {
    const { repo, provider, trap, temporary } = fixture;
    const merged = await mergeToMain(repo, workspace, { message: 'Land it' });
    expect(merged).toMatchObject({ status: 'failed', error: expect.stringMatching(/\.git.*Put it back with `printf 'gitdir: %s\\n' .*worktrees\/worker > \.git`.*nothing was merged/s) });
    expect(await unmergedWork(repo, workspace)).toMatchObject({ status: 'unreadable', reason: expect.stringMatching(/\.git/) });
    const salvaged = await salvageWorkspace(repo, workspace, 'The worker stopped.');
    if (!salvaged.ok) throw new Error(salvaged.error);
    expect(salvaged).toMatchObject({ ok: true, files: expect.arrayContaining(['work.txt']) });
    // Salvage went to the workspace's real branch, not into the agent's repository.
    expect(await temporary.git(['show', 'colony/worker:work.txt'])).toBe('the agent’s work\n');
    expect(await provider.remove(workspace, { deleteBranch: false })).toMatchObject({ removed: false });
    expect(await trap.fired()).toEqual([]);
  }

  it('does not follow a .git file rewritten to name a repository the agent made', async () => {
    const workspace = await fixture.provider.create({ id: 'worker', parentDir: fixture.parentDir });
    await writeFile(join(workspace.path, 'work.txt'), 'the agent’s work\n');
    const gitDir = await agentRepository(workspace, 'elsewhere.git', true);
    await writeFile(join(workspace.path, '.git'), `gitdir: ${gitDir}\n`);
    // Live: the agent's own git now reads that repository and runs its fsmonitor.
    plainGit(['status'], workspace.path);
    expect(await fixture.trap.fired()).toContain('fsmonitor');
    await rm(fixture.trap.markers, { recursive: true });
    await mkdir(fixture.trap.markers);
    await expectColonyUnmoved(workspace);
  });

  it('does not use a .git directory that replaced the .git file', async () => {
    const workspace = await fixture.provider.create({ id: 'worker', parentDir: fixture.parentDir });
    await writeFile(join(workspace.path, 'work.txt'), 'the agent’s work\n');
    await rm(join(workspace.path, '.git'));
    await agentRepository(workspace, '.');
    plainGit(['status'], workspace.path);
    expect(await fixture.trap.fired()).toContain('fsmonitor');
    await rm(fixture.trap.markers, { recursive: true });
    await mkdir(fixture.trap.markers);
    await expectColonyUnmoved(workspace);
  });

  it('keeps a planner’s view of the trunk following the trunk through its own git directory after the planner rewrote .git', async () => {
    const { repo, trap, temporary, parentDir } = fixture;
    const view = await createMainView(repo, { id: 'view', parentDir });
    expect(plainGit(['init', '--quiet', '--bare', 'planted.git'], view.path).code).toBe(0);
    const planted = join(view.path, 'planted.git');
    await plantHooks(trap, join(planted, 'hooks'), 'agent-hook');
    writeConfig(join(planted, 'config'), [...hostileSettings(trap, join(temporary.base, 'none.cfg')), ['core.bare', 'false']], view.path);
    await writeFile(join(view.path, '.git'), `gitdir: ${planted}\n`);
    await temporary.write('README.md', '# moved on\n');
    const mainCommit = await temporary.commitAll('Trunk moves on');
    expect(await view.followMain()).toBeNull();
    expect(view.commit()).toBe(mainCommit);
    expect(await readFile(join(view.path, 'README.md'), 'utf8')).toBe('# moved on\n');
    // The view's .git is put back, so what the planner runs next reaches the repository again.
    expect(plainGit(['rev-parse', 'HEAD'], view.path).output.trim()).toBe(mainCommit);
    expect(await trap.fired()).toEqual([]);
    await view.remove();
  });

  it('does not run git inside a repository the agent made in the workspace and committed as a submodule', async () => {
    const { repo, provider, trap, temporary, parentDir } = fixture;
    const workspace = await provider.create({ id: 'worker', parentDir });
    await agentRepository(workspace, 'nested');
    await writeFile(join(workspace.path, 'nested', 'inner.txt'), 'inner\n');
    // The agent commits inside its repository and records it in the workspace, hooks bypassed.
    plainGit(['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'commit.gpgSign=false', 'add', 'inner.txt'], join(workspace.path, 'nested'));
    plainGit(['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'commit.gpgSign=false', 'commit', '-qm', 'inner'], join(workspace.path, 'nested'));
    await temporary.git(['add', 'nested'], workspace.path);
    await writeFile(join(workspace.path, 'nested', 'inner.txt'), 'changed inside\n');
    await writeFile(join(workspace.path, 'nested', 'untracked.txt'), 'new inside\n');
    await unmergedWork(repo, workspace);
    expect(await mergeToMain(repo, workspace, { message: 'Add nested' })).toMatchObject({ status: 'landed' });
    await unmergedWork(repo, workspace);
    await salvageWorkspace(repo, workspace, 'The worker stopped.');
    expect(await trap.fired()).toEqual([]);
  });
});
