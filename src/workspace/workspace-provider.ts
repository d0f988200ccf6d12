import type {
  CreateWorkspaceOptions,
  KeepWorkspaceResult,
  RemoveWorkspaceOptions,
  RemoveWorkspaceResult,
  Workspace,
  WorkspaceMethod,
} from './workspace.js';

/** Workspaces a provider found under a directory, and what it could not make sense of there. */
export interface FoundWorkspaces {
  readonly workspaces: readonly Workspace[];
  /** One sentence per thing left alone, saying what and why. */
  readonly problems: readonly string[];
}

/**
 * Makes and removes workspaces for one repository, by one method. Whatever the method, a
 * workspace is a real linked worktree from git's point of view (own index, own HEAD, branch
 * `colony/<id>`, a `.git` file naming `<common git dir>/worktrees/<id>`), so merging, status
 * checks and the agents' own git commands work in it unchanged. Every implementation passes
 * the shared suite in `workspace-provider.conformance.ts`.
 */
export interface WorkspaceProvider {
  readonly method: WorkspaceMethod;
  /**
   * Makes what workspaces share ahead of the first one, so no worker waits for it (overlay:
   * the base checkout of main). Safe to skip: `create` makes it when needed. Throws when it cannot.
   */
  prepare(): Promise<void>;
  /**
   * Makes a workspace on a new branch `colony/<id>` at main's current commit. Throws when
   * the id is malformed, the directory or the branch already exists, or git or the disk fails,
   * with the reason in the message; nothing is left behind then.
   */
  create(options: CreateWorkspaceOptions): Promise<Workspace>;
  /**
   * Puts `to` in the place of the shared layer `from` a workspace was made with
   * (`sharedLayers`, `layersFor`), or on top of its layers when `from` is null, keeping
   * everything the agent changed; only a method that
   * stacks layers rather than copying them in has it (overlay). Call it between the agent's
   * commands. Never throws: a failure says why and the workspace keeps `from`.
   */
  replaceSharedLayer?(workspace: Workspace, from: string | null, to: string): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: string }>;
  /**
   * Removes a workspace, uncommitted changes and all: call it only once its work has landed,
   * been salvaged, or is not wanted (see `unmergedWork`). Deletes the branch only when asked,
   * and then only when main contains it unless forced, by compare-and-swap. Works when the
   * workspace is partly gone already. Never throws for what git or the disk does: whatever was
   * kept comes back with the reason.
   */
  remove(workspace: Workspace, options: RemoveWorkspaceOptions): Promise<RemoveWorkspaceResult>;
  /**
   * Marks a workspace colony keeps because it holds work it could not read or save: git never
   * prunes its record then. Failing to mark it is reported, not thrown.
   */
  keep(workspace: Workspace, reason: string): Promise<KeepWorkspaceResult>;
  /**
   * Every workspace of this method under `parentDir`, made by this process or left behind by
   * one that ended, made readable by git again where it can be (an overlay whose mount is gone
   * is mounted again). For the sweep at the start of a run; never throws.
   */
  find(parentDir: string): Promise<FoundWorkspaces>;
  /**
   * The bytes the workspaces' own files take on disk (a worktree's files; an overlay's upper
   * layer), each file counted once however many links to it they hold. Never throws.
   */
  diskUsage(workspaces: readonly Workspace[]): Promise<number>;
  /**
   * About how many bytes `diskUsage` will count for a workspace made now, before anything is
   * written in it, without making one (worktree: main's files; overlay: next to nothing).
   * For deciding whether another workspace fits under a cap. Never throws.
   */
  estimateFreshBytes(): Promise<number>;
  /** Deletes what no workspace needs any more (overlay: base checkouts of older main commits). Returns the paths deleted. */
  prune(): Promise<string[]>;
  /**
   * At the end of a run: deletes what workspaces shared, the newest too, as far as no
   * workspace left on disk still needs it. Returns the paths deleted; never throws.
   */
  close(): Promise<string[]>;
}
