import { join } from 'node:path';
import { pathExists } from '../files/path-exists.js';
import { runGit, splitNul } from '../git/git.js';
import type { Repository } from '../git/repository.js';
import type { Workspace } from '../workspace.js';

/**
 * The names models give the notes they write about their own work, compared in lower case
 * with `-`, `_` and spaces taken out (`TASK_SUMMARY`, `task-summary` and `TaskSummary` are one).
 * Kept to names a project rarely gives its own files: a `CHANGELOG` or a `ROADMAP` is left alone.
 */
const NOTE_NAMES: ReadonlySet<string> = new Set([
  'summary',
  'notes',
  'tasksummary',
  'tasknotes',
  'worksummary',
  'implementationnotes',
  'implementationsummary',
  'changessummary',
  'changesummary',
  'worklog',
  'progress',
  'progressnotes',
  'handoff',
  'handoffnotes',
  'sessionnotes',
  'sessionsummary',
  'agentnotes',
]);

/** The extensions a notes file has: Markdown, plain text, or none. */
const NOTE_EXTENSIONS: ReadonlySet<string> = new Set(['', '.md', '.txt']);

/** Whether the file at `path` (anywhere in the repository) has a notes file's name: `NOTES.md`, `docs/task-summary.txt`, `WORKLOG`. */
export function hasNoteName(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  const dot = name.lastIndexOf('.');
  const extension = dot <= 0 ? '' : name.slice(dot);
  if (!NOTE_EXTENSIONS.has(extension)) return false;
  const stem = extension === '' ? name : name.slice(0, dot);
  return NOTE_NAMES.has(stem.replace(/[-_ ]/g, ''));
}

/**
 * The files a merge of the workspace would add to main that have a notes file's name
 * (`hasNoteName`): in the workspace, committed or not (ignored files aside), and not on main.
 * A file main already has is the project's, whatever its name. Empty when git cannot say:
 * the merge itself then reports what is wrong. Never throws.
 */
export async function addedNoteFiles(repo: Repository, workspace: Workspace): Promise<string[]> {
  const listed = await runGit(workspace, ['ls-files', '-z', '--cached', '--others', '--exclude-standard']);
  if (listed.code !== 0) return [];
  const named = [...new Set(splitNul(listed.stdout).filter(hasNoteName))];
  // A tracked file deleted in the workspace is still listed, but a merge deletes it rather than adds it.
  const present = (await Promise.all(named.map(async (path) => ((await pathExists(join(workspace.path, path))) ? [path] : [])))).flat();
  if (present.length === 0) return [];
  const onMain = await runGit(workspace, ['--literal-pathspecs', 'ls-tree', '-r', '-z', '--name-only', `refs/heads/${repo.mainBranch}`, '--', ...present]);
  if (onMain.code !== 0) return [];
  const mainHas = new Set(splitNul(onMain.stdout));
  return present.filter((path) => !mainHas.has(path)).sort();
}
