import type { Command } from 'commander';
import type { CommandContext } from '../command-context.js';
import { registerBenchMergeCommand } from './bench-merge.js';
import { registerBenchWorkspaces } from './bench-workspaces.js';

/**
 * `colony bench <what>`: measurements of colony's own parts on the user's machine and
 * repository, each a subcommand registered here.
 */
export function defineBenchCommand(command: Command, ctx: CommandContext): void {
  registerBenchWorkspaces(command, ctx);
  registerBenchMergeCommand(command, ctx);
}
