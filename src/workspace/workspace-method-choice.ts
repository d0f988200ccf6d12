import type { WorkspaceMethod } from './workspace.js';

/** What the user asked for: a method, or `auto` (overlay where it works, worktree elsewhere). */
export type WorkspaceMethodChoice = 'auto' | WorkspaceMethod;

export const WORKSPACE_METHOD_CHOICES: readonly WorkspaceMethodChoice[] = ['auto', 'overlay', 'worktree'];
