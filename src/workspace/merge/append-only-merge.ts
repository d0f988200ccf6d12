import { writeCheckoutFile } from '../files/confined-file.js';
import { describeFailure, runGit } from '../git/git.js';
import { conflictStage, type ConflictResolution } from '../git/rebase-state.js';
import type { GitWorkTree } from '../git/git.js';

/**
 * The conflicts that cost an agent nothing: both sides only appended lines to the end of the
 * same file (a registry, an index of exports, a changelog), or made the identical change.
 * Such a file is merged as main's version followed by the workspace's appended block (only
 * skipped when main already holds that whole block, or the part of it main's own
 * addition starts it with); anything else is a real conflict for the agent.
 */
export function mergeAppendOnly(base: string, main: string, workspace: string): string | null {
  if (base.includes('\0') || main.includes('\0') || workspace.includes('\0')) return null;
  if (main === workspace) return main;
  if (base !== '' && !base.endsWith('\n')) return null;
  if (!main.startsWith(base) || !workspace.startsWith(base)) return null;
  const mainAdded = linesOf(main.slice(base.length));
  const workspaceAdded = linesOf(workspace.slice(base.length));
  // Only whole blocks count as already there: single lines like `}` or a blank line repeat
  // legitimately, and dropping one would corrupt the workspace's addition.
  if (containsBlock(mainAdded, workspaceAdded)) return main;
  const extra = startsWithBlock(workspaceAdded, mainAdded) ? workspaceAdded.slice(mainAdded.length) : workspaceAdded;
  const separator = main === '' || main.endsWith('\n') ? '' : '\n';
  return `${main}${separator}${extra.join('\n')}\n`;
}

function startsWithBlock(lines: readonly string[], block: readonly string[]): boolean {
  return block.length <= lines.length && block.every((line, index) => lines[index] === line);
}

/** Whether `block` appears in `lines` as consecutive lines. */
function containsBlock(lines: readonly string[], block: readonly string[]): boolean {
  for (let start = 0; start + block.length <= lines.length; start += 1) {
    if (block.every((line, index) => lines[start + index] === line)) return true;
  }
  return false;
}

function linesOf(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * Resolves and stages every conflicted file of a stopped rebase in `worktree` that is an
 * append-only (or identical) change on both sides; leaves the rest as git left them.
 */
export async function resolveAppendOnlyConflicts(worktree: GitWorkTree, files: readonly string[]): Promise<ConflictResolution> {
  const resolved: string[] = [];
  const remaining: string[] = [];
  for (const file of files) {
    const [base, main, workspace] = await Promise.all([conflictStage(worktree, 1, file), conflictStage(worktree, 2, file), conflictStage(worktree, 3, file)]);
    const merged = base === null || main === null || workspace === null ? null : mergeAppendOnly(base, main, workspace);
    if (merged === null) {
      remaining.push(file);
      continue;
    }
    await writeCheckoutFile(worktree.path, file, merged);
    const addArgs = ['add', '--', file];
    const added = await runGit(worktree, addArgs);
    if (added.code !== 0) throw new Error(describeFailure(addArgs, added));
    resolved.push(file);
  }
  return { resolved, remaining };
}
