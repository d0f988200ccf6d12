import { afterEach, describe, expect, it } from 'vitest';
import { openRepository, type Repository } from '../../workspace/git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from '../../workspace/testing/temporary-repository.js';
import { checkCommandAt } from './green-check-command.js';

describe('checkCommandAt', () => {
  let temporary: TemporaryRepository | null = null;
  afterEach(async () => {
    await temporary?.remove();
    temporary = null;
  });

  async function commitOf(files: Record<string, string>): Promise<{ repo: Repository; commit: string }> {
    temporary = await createTemporaryRepository(files);
    const repo = await openRepository(temporary.root);
    if (!repo.ok) throw new Error(repo.error);
    return { repo: repo.repo, commit: (await temporary.git(['rev-parse', 'HEAD'])).trim() };
  }

  it("takes a real goal's colony-spec test command, with no module list", async () => {
    const { repo, commit } = await commitOf({ 'package.json': '{ "scripts": { "test": "vitest run" } }\n' });
    const goal = '# Faster\n\n```colony-spec\n{ "project": { "test": "npm run test:unit" } }\n```\n';
    expect(await checkCommandAt(repo, commit, goal, null)).toBe('npm run test:unit');
  });

  it("falls back to the project's own files when the spec names no test, and puts --check first", async () => {
    const { repo, commit } = await commitOf({ 'package.json': '{ "scripts": { "test": "vitest run" } }\n' });
    const goal = '# Faster\n\n```colony-spec\n{ "project": { "index": "src/index.js" } }\n```\n';
    expect(await checkCommandAt(repo, commit, goal, null)).toBe('npm test');
    expect(await checkCommandAt(repo, commit, goal, 'make check')).toBe('make check');
  });
});
