import { Command, CommanderError } from 'commander';
import { registerDemoCommand } from './commands/demo.js';
import { registerEventsCommand } from './commands/events.js';
import { registerSimServerCommand } from './commands/sim-server.js';
import { registerWorkCommand } from './commands/work.js';
import { EXIT_USAGE, type CommandContext } from './command-context.js';

/**
 * Entry point of the `colony` command: parses `argv` (without node and the script) and returns
 * the exit code: 0 success, 1 the work failed, 2 bad usage.
 */
export async function main(argv: readonly string[], context: Partial<CommandContext> = {}): Promise<number> {
  const ctx: CommandContext = {
    stdout: context.stdout ?? ((text) => process.stdout.write(text)),
    stderr: context.stderr ?? ((text) => process.stderr.write(text)),
    env: context.env ?? process.env,
    cwd: context.cwd ?? process.cwd(),
    signal: context.signal ?? interruptSignal(),
    exitCode: 0,
  };
  const program = new Command('colony')
    .description('Run many LLM coding agents on one repository.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help to see the options)')
    .exitOverride()
    .configureOutput({ writeOut: ctx.stdout, writeErr: ctx.stderr });
  registerWorkCommand(program, ctx);
  registerEventsCommand(program, ctx);
  registerSimServerCommand(program, ctx);
  registerDemoCommand(program, ctx);

  if (argv.length === 0) {
    ctx.stderr(program.helpInformation());
    return EXIT_USAGE;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      return EXIT_USAGE;
    }
    throw error;
  }
  return ctx.exitCode;
}

/** Aborted on the first Ctrl-C or SIGTERM, for commands that run until stopped. */
function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return controller.signal;
}
