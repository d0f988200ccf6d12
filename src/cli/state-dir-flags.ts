import { resolve } from 'node:path';
import { defaultStateDir } from '../orchestrator/state-directory.js';
import type { CommandContext } from './command-context.js';

/** `--repo` and `--state`, as the commands that read or steer a run take them. */
export interface StateDirFlags {
  readonly repo: string;
  readonly state?: string;
}

/** The state directory the flags name: `--state`, else the repository's own (`<repo>/.colony`). */
export function stateDirOf(ctx: Pick<CommandContext, 'cwd'>, flags: StateDirFlags): string {
  return flags.state === undefined ? defaultStateDir(resolve(ctx.cwd, flags.repo)) : resolve(ctx.cwd, flags.state);
}
