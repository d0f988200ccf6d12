import { runGit, splitNul } from '../git/git.js';
import type { Repository } from '../git/repository.js';
import type { Workspace } from '../workspace.js';

/**
 * Tests a worker's change edits that its task does not own. A model whose run shows a test
 * failing for someone else's reason likes to "fix" it where it stands: skip it, loosen its
 * assertion, delete it. That hides main's failure from the green loop and from the planner that
 * owns it, so colony asks once before such a change lands (see the worker's merge tool).
 */

/** Folder names that hold tests, in any project: `test/`, `tests/`, `__tests__/`, `spec/`. */
const TEST_FOLDERS: ReadonlySet<string> = new Set(['test', 'tests', '__tests__', 'spec', 'specs']);

/**
 * Whether `path` is a test file by the conventions of the usual test runners: `*.test.*` and
 * `*.spec.*` (JavaScript and TypeScript), `*_test.*` (Go, Python), `test_*.py` (pytest), or any
 * file under a tests folder.
 */
export function isTestFile(path: string): boolean {
  const segments = path.split('/');
  const name = segments.at(-1) ?? '';
  if (/\.(test|spec)\.[^.]+$/i.test(name) || /_test\.[^.]+$/i.test(name) || /^test_.+\.py$/i.test(name)) return true;
  return segments.slice(0, -1).some((segment) => TEST_FOLDERS.has(segment.toLowerCase()));
}

/**
 * The test files (`isTestFile`) the project had where the workspace's work started (its fork
 * point with main) that the workspace changes or deletes, committed or not, and that `owned`
 * does not claim for the task. A test the work adds is its own, whatever its path. Empty when
 * git cannot say: the merge itself then reports what is wrong. Never throws.
 */
export async function changedTestsOutside(repo: Repository, workspace: Workspace, owned: (path: string) => boolean): Promise<string[]> {
  const base = await runGit(workspace, ['merge-base', 'HEAD', `refs/heads/${repo.mainBranch}`]);
  if (base.code !== 0) return [];
  const changed = await runGit(workspace, ['diff', '--name-status', '--no-renames', '-z', base.stdout.trim()]);
  if (changed.code !== 0) return [];
  const fields = splitNul(changed.stdout);
  const files: string[] = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const status = fields[index] ?? '';
    const path = fields[index + 1] ?? '';
    if (status !== 'A' && isTestFile(path) && !owned(path)) files.push(path);
  }
  return [...new Set(files)].sort();
}
