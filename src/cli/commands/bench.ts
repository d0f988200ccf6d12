import type { Command } from 'commander';
import type { CommandContext } from '../command-context.js';
import { registerBenchMergeCommand } from './bench-merge.js';
import { registerBenchWorkspaces } from './bench-workspaces.js';

/**
 * `colony bench <what>`: measurements of colony's own parts on the user's machine and
 * repository, each a subcommand registered here.
 */
export function registerBenchCommand(program: Command, ctx: CommandContext): Command {
  const bench = program.command('bench').description("Measure colony's parts on this machine and a repository.");
  registerBenchWorkspaces(bench, ctx);
  registerBenchMergeCommand(bench, ctx);
  return bench;
}
