import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { openConfined } from '../workspace/files/confined-file.js';
import { describeFileError, errorCode } from './file-errors.js';
import type { WorkspacePath } from './workspace-paths.js';

export type OpenedWorkspaceFile =
  | { readonly ok: true; readonly handle: FileHandle }
  | { readonly ok: false; readonly error: string; readonly code: string | undefined };

/**
 * Opens a path `resolveWorkspacePath` checked, so that what is opened is what was checked:
 * `path.real` has every link resolved, so a link met now was put there since, and the file
 * opened must still lie inside the workspace (see `openConfined`). `action` names the use in
 * errors ("read", "write"). Never throws.
 */
export async function openWorkspaceFile(path: WorkspacePath, flags: number, action: string): Promise<OpenedWorkspaceFile> {
  const opened = await openConfined(path.realRoot, path.real, flags);
  if (opened.ok) return opened;
  if (opened.reason === 'link' || opened.reason === 'outside') {
    return { ok: false, code: 'ELOOP', error: `cannot ${action} ${path.display}: it was replaced by a symbolic link while being opened, and now leads elsewhere; refused` };
  }
  return { ok: false, code: errorCode(opened.error), error: describeFileError(opened.error, action, path.display) };
}

/**
 * Opens a file for writing, creating it when missing, with the same guarantees. A file made by
 * this call but found outside the workspace afterwards (a race) is deleted again.
 */
export async function openWorkspaceFileForWriting(path: WorkspacePath): Promise<OpenedWorkspaceFile> {
  const created = await openWorkspaceFile(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 'write');
  if (created.ok || created.code !== 'EEXIST') return created;
  return openWorkspaceFile(path, constants.O_WRONLY, 'write');
}

/**
 * Why a regular file must not be written in place, or null: a file with other hard links is
 * shared with another path (a shared dependency layer is linked into workspaces this way; an
 * agent's command could link a file from outside), and writing through one name changes them all.
 */
export function sharedFileProblem(display: string, links: number): string | null {
  if (links <= 1) return null;
  return `${display} has ${links - 1} other hard link(s): it is shared with another path (such as a dependency layer other workspaces use, or a file outside the workspace), and changing it here would change them all; refused. To change only this workspace's copy, delete it with run_command (rm) and write it again.`;
}
