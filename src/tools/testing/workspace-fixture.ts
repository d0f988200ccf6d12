import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolContext } from '../tool.js';

/**
 * A workspace for tests, next to a directory outside it that symbolic links inside point to:
 * `file-link` (to outside/secret.txt), `dir-link` (to outside/), `dangling-link` (to a file
 * in outside/ that does not exist yet), plus `.git/` and `src/main.ts`.
 */
export interface WorkspaceFixture {
  readonly root: string;
  readonly outside: string;
  remove(): void;
}

export function createWorkspaceFixture(): WorkspaceFixture {
  const parent = realpathSync(mkdtempSync(join(tmpdir(), 'colony-tools-')));
  const root = join(parent, 'workspace');
  const outside = join(parent, 'outside');
  mkdirSync(join(root, '.git'), { recursive: true });
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(root, 'src', 'main.ts'), 'export const answer = 42;\n');
  writeFileSync(join(outside, 'secret.txt'), 'outside secret\n');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'file-link'));
  symlinkSync('../outside', join(root, 'dir-link'));
  symlinkSync(join(outside, 'created-through-link.txt'), join(root, 'dangling-link'));
  return { root, outside, remove: () => rmSync(parent, { recursive: true, force: true }) };
}

/** A tool context whose signal never fires, unless one is given. */
export function toolContext(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, callId: 'call-test' };
}
