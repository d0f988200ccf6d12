import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coverOperations, planCovers, reachableInView } from './private-directories.js';

describe('covering the private directories on an agent’s way', () => {
  let base = '';
  let privateDir = '';
  let gitDir = '';
  let workspace = '';
  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'colony-private-plan-'));
    privateDir = join(base, 'private');
    gitDir = join(privateDir, 'repo', '.git');
    workspace = join(gitDir, 'colony', 'workspaces', 'a');
    mkdirSync(workspace, { recursive: true });
    mkdirSync(join(gitDir, 'colony', 'output', 'a'), { recursive: true });
    writeFileSync(join(privateDir, 'secret.txt'), 'secret');
    symlinkSync(privateDir, join(base, 'link'));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  /** The agent may search everything but `blocked`. */
  const except = (...blocked: string[]) => (dir: string) => !blocked.includes(dir);

  it('covers nothing when every directory on the way lets the agent through', () => {
    expect(planCovers([workspace, gitDir], except())).toEqual({ covers: [], shown: [] });
  });

  it('covers the private directory and shows only the paths needed, one inside another shown once', () => {
    const plan = planCovers([workspace, gitDir, join(gitDir, 'colony', 'output', 'a')], except(privateDir));
    expect(plan).toEqual({ covers: [privateDir], shown: [gitDir] });
    expect(coverOperations(plan)).toEqual(['cover', privateDir, 'show', gitDir]);
  });

  it('covers a private directory inside a shown path too, and shows what is needed below it', () => {
    const state = join(gitDir, 'colony');
    const plan = planCovers([gitDir, workspace], except(privateDir, state));
    expect(plan).toEqual({ covers: [privateDir, state], shown: [gitDir, workspace] });
    expect(coverOperations(plan)).toEqual(['cover', privateDir, 'show', gitDir, 'cover', state, 'show', workspace]);
  });

  it('needs one cover for nested private directories: what is below the first is its own', () => {
    expect(planCovers([workspace], except(base, privateDir))).toEqual({ covers: [base], shown: [workspace] });
  });

  it('follows symbolic links to the real directories, and drops paths that do not exist', () => {
    const throughLink = join(base, 'link', 'repo', '.git');
    expect(planCovers([throughLink, join(base, 'missing', 'x')], except(privateDir))).toEqual({ covers: [privateDir], shown: [gitDir] });
  });

  it('never covers a path the agent must reach itself, which would take what is in it away', () => {
    expect(planCovers([gitDir, workspace], except(gitDir))).toEqual({ covers: [], shown: [] });
  });

  it('tells what is in the view the covers make: the shown paths and the way to them, nothing else', () => {
    const plan = planCovers([workspace, gitDir], except(privateDir));
    const searchable = except(privateDir);
    expect(reachableInView(join(gitDir, 'colony'), plan, searchable)).toBe(true);
    expect(reachableInView(join(privateDir, 'repo'), plan, searchable)).toBe(true);
    expect(reachableInView(join(privateDir, 'secret.txt'), plan, searchable)).toBe(false);
    expect(reachableInView(join(privateDir, 'repo', 'readme.md'), plan, searchable)).toBe(false);
    // A directory the agent may not search inside a shown path keeps it out, as on the host.
    expect(reachableInView(join(gitDir, 'colony', 'output', 'a'), plan, except(privateDir, join(gitDir, 'colony')))).toBe(false);
  });
});
