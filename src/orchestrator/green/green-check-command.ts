import { parseColonySpec } from '../../spec/colony-spec.js';
import { runGit } from '../../workspace/git/git.js';
import type { Repository } from '../../workspace/git/repository.js';
import { detectTestCommandIn } from './project-test-command.js';

/** Files read to find a test command: small ones, at the top of the tree. */
const READ_FILES = ['package.json', 'GNUmakefile', 'makefile', 'Makefile'];

/**
 * The command a green snapshot of `commit` runs: `--check` when the user gave one, else the
 * goal's colony-spec `project.test`, else what the project's own files at that commit say
 * (`npm test`, `make test`, ...; see `detectTestCommandIn`). Read from the commit, not from the
 * user's checkout, which colony leaves alone while the run goes. Null when nothing says.
 */
export async function checkCommandAt(repo: Repository, commit: string, goal: string, configured: string | null): Promise<string | null> {
  if (configured !== null) return configured;
  const spec = parseColonySpec(goal);
  const specTest = spec.ok ? spec.spec?.project?.test : undefined;
  if (specTest !== undefined) return specTest;
  const listed = await runGit(repo.root, ['ls-tree', '--name-only', commit]);
  if (listed.code !== 0) return null;
  const names = new Set(listed.stdout.split('\n').filter((name) => name !== ''));
  const texts = new Map<string, string>();
  for (const name of READ_FILES.filter((each) => names.has(each))) {
    const shown = await runGit(repo.root, ['show', `${commit}:${name}`]);
    if (shown.code === 0) texts.set(name, shown.stdout);
  }
  return detectTestCommandIn({ text: (name) => texts.get(name) ?? null, isFile: (name) => names.has(name) })?.command ?? null;
}
