import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { renderBytesAsText } from '../sandbox/process/output-capture.js';
import { describeFileError, errorCode } from './file-errors.js';
import { runRipgrep } from './ripgrep.js';
import type { Tool, ToolContext, ToolResult } from './tool.js';
import { resolveWorkspacePath } from './workspace-paths.js';
import type { WorkspaceRoot } from './workspace-paths.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

export const MAX_SEARCH_MATCHES = 200;
export const MAX_SEARCH_BYTES = 50 * 1024;
export const SEARCH_TIMEOUT_MS = 60_000;

const description = readFileSync(new URL('./descriptions/search.md', import.meta.url), 'utf8');

export const searchParameters = z.object({
  pattern: z.string().min(1).describe('A regular expression (Rust regex syntax) to look for in file contents.'),
  path: z
    .string()
    .optional()
    .describe('The directory or file to search, relative to the workspace root. Defaults to "." (the whole workspace).'),
  glob: z
    .string()
    .optional()
    .describe('Only search files whose path matches this glob, e.g. "*.ts" or "src/**/*.test.ts"; prefix with ! to exclude.'),
});
export type SearchInput = z.infer<typeof searchParameters>;

export interface SearchToolOptions {
  /** The ripgrep binary; defaults to the one from @vscode/ripgrep. */
  readonly ripgrepPath?: string;
}

/** `search`: ripgrep over the workspace, `file:line:text` per match, capped. */
export function createSearchTool(workspace: WorkspaceRoot, options: SearchToolOptions = {}): Tool<SearchInput> {
  return {
    name: TOOL_NAMES.search,
    description,
    parameters: searchParameters,
    execute: (input, context) => search(workspace, input, context, options),
  };
}

async function search(
  workspace: WorkspaceRoot,
  input: SearchInput,
  context: ToolContext,
  options: SearchToolOptions,
): Promise<ToolResult> {
  const resolved = await resolveWorkspacePath(workspace, input.path ?? '.');
  if (!resolved.ok) return resolved;
  const { display, real, realRoot } = resolved.path;
  try {
    await stat(real);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      return { ok: false, error: `path does not exist: ${display}; use list_dir to see what is there` };
    }
    return { ok: false, error: describeFileError(error, 'search', display) };
  }
  const ripgrepPath = options.ripgrepPath ?? (await bundledRipgrepPath());
  if (ripgrepPath === null) return { ok: false, error: 'search is unavailable: the ripgrep binary is not installed' };

  // The target is given relative to the real root, so every match prints as a workspace path.
  const target = real === realRoot ? '.' : real.slice(realRoot.length + 1);
  const args = [
    '--no-config',
    '--line-number',
    '--with-filename',
    '--no-heading',
    '--color',
    'never',
    '--hidden',
    '--sort',
    'path',
    '--max-columns',
    '500',
    '--max-columns-preview',
    ...(input.glob === undefined ? [] : ['--glob', input.glob]),
    // Among globs the last match wins, so this comes after the caller's: excluding every `.git`
    // (directory, or the file of a linked worktree) prunes it before any glob sees its contents.
    '--glob',
    '!.git',
    '--regexp',
    input.pattern,
    '--',
    target,
  ];
  const run = await runRipgrep({
    ripgrepPath,
    args,
    cwd: realRoot,
    signal: context.signal,
    timeoutMs: SEARCH_TIMEOUT_MS,
    maxLines: MAX_SEARCH_MATCHES,
    maxBytes: MAX_SEARCH_BYTES,
  });
  if (run.startError !== null) return { ok: false, error: `search could not start ripgrep: ${run.startError}` };
  if (run.aborted) return { ok: false, error: 'search was cancelled' };
  const matches = run.lines.map((line) => renderBytesAsText(line).replace(/^\.\//, ''));
  const errors = renderBytesAsText(run.stderr).trim();
  if (matches.length === 0) {
    if (run.timedOut) return { ok: false, error: `search found nothing within ${SEARCH_TIMEOUT_MS / 1000} s; narrow the path or glob` };
    if (run.exitCode !== 0 && run.exitCode !== 1) {
      return { ok: false, error: `search failed: ${errors || `ripgrep exited with code ${String(run.exitCode)}`}` };
    }
    return { ok: true, output: 'no matches' };
  }
  const notes: string[] = [];
  if (run.capped) {
    notes.push(
      `[... stopped after ${matches.length} matches (limits: ${MAX_SEARCH_MATCHES} matches, ${MAX_SEARCH_BYTES / 1024} KB); narrow the pattern, path or glob to see the rest]`,
    );
  }
  if (run.timedOut) notes.push(`[... search stopped after ${SEARCH_TIMEOUT_MS / 1000} s; narrow the path or glob to see the rest]`);
  if (run.exitCode === 2 && errors !== '') notes.push(`[some files could not be searched: ${errors.slice(0, 500)}]`);
  return { ok: true, output: [...matches, ...notes].join('\n') };
}

let bundledPath: Promise<string | null> | undefined;

/** Imported lazily: the package throws at import time when its platform binary is missing. */
function bundledRipgrepPath(): Promise<string | null> {
  bundledPath ??= import('@vscode/ripgrep').then(
    (module) => module.rgPath,
    () => null,
  );
  return bundledPath;
}
