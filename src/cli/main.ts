import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { COMMANDS, commandNamed } from './command-table.js';
import { EXIT_FAILED, EXIT_USAGE, type CommandContext } from './command-context.js';
import { handleInterrupts, type InterruptHandling } from './interrupts.js';
import type { Terminal } from './terminal-ui.js';
import { createSecretRedactor, secretsInEnvironment } from '../events/secret-redaction.js';
import { PostgresStoreError } from '../store/postgres/postgres-failures.js';
import { DamagedStoreError } from '../store/sqlite/damaged-store-error.js';

/**
 * Entry point of the `colony` command: parses `argv` (without node and the script) and returns
 * the exit code: 0 success, 1 the work failed, 2 bad usage.
 */
export async function main(givenArgv: readonly string[], context: Partial<CommandContext> = {}): Promise<number> {
  const env = context.env ?? process.env;
  // `--no-color` is taken wherever it stands, before or after the command's name.
  const argv = givenArgv.filter((arg) => arg !== NO_COLOR_FLAG);
  const color = context.color ?? (argv.length === givenArgv.length && (env.NO_COLOR ?? '') === '');
  // Keys can come back in a provider's error or a URL a command prints: nothing colony writes
  // to the terminal carries them.
  const secrets = secretsInEnvironment(env, apiKeyVariablesIn(argv));
  const redactor = createSecretRedactor(secrets);
  const redacted = (write: (text: string) => void) => (text: string) => write(redactor.redactText(text));
  const stderr = redacted(context.stderr ?? writeTo(process.stderr));
  const interrupts: InterruptHandling | null =
    context.signal === undefined ? handleInterrupts(stderr, (code) => process.exit(code)) : null;
  const ctx: CommandContext = {
    stdout: redacted(context.stdout ?? writeTo(process.stdout)),
    stderr,
    secrets,
    env,
    cwd: context.cwd ?? process.cwd(),
    signal: context.signal ?? interrupts?.signal ?? new AbortController().signal,
    ...terminalOf(context),
    color,
    exitCode: 0,
  };
  try {
    return await runProgram(argv, ctx);
  } catch (error) {
    // A store's file damaged on disk, or a PostgreSQL store that cannot be used as given, is the
    // user's to deal with, and its message says how.
    if (error instanceof DamagedStoreError || error instanceof PostgresStoreError) {
      ctx.stderr(`colony: ${error.message}\n`);
      return EXIT_FAILED;
    }
    // A bug in colony: say so plainly, with the stack for the report, and fail.
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    ctx.stderr(`colony: internal error, please report it with what you ran:\n${detail}\n`);
    return EXIT_FAILED;
  } finally {
    interrupts?.dispose();
    // Everything is written and released by now. A process whose terminal hung up ends the
    // conventional way, by the hang-up signal itself: Node's own exit would try to restore
    // the vanished terminal's settings and abort.
    if (interrupts?.hungUp() === true) process.kill(process.pid, 'SIGHUP');
  }
}

const NO_COLOR_FLAG = '--no-color';

/** colony's version, from the package it is part of (a checkout's or an install's package.json). */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}

/** The process's terminal, when colony runs in one and the caller did not redirect its output. */
function terminalOf(context: Partial<CommandContext>): { terminal?: Terminal } {
  if (context.terminal !== undefined) return { terminal: context.terminal };
  if (context.stdout !== undefined || process.stdin.isTTY !== true || process.stdout.isTTY !== true) return {};
  return { terminal: { stdin: process.stdin, stdout: process.stdout } };
}

/** The variables named with `--api-key-env`, whose values are secrets whatever they are called. */
function apiKeyVariablesIn(argv: readonly string[]): string[] {
  const names: string[] = [];
  argv.forEach((arg, index) => {
    if (arg === '--api-key-env' && argv[index + 1] !== undefined) names.push(argv[index + 1] ?? '');
    else if (arg.startsWith('--api-key-env=')) names.push(arg.slice('--api-key-env='.length));
  });
  return names;
}

async function runProgram(argv: readonly string[], ctx: CommandContext): Promise<number> {
  const program = new Command('colony')
    .description('Run many LLM coding agents on one repository.')
    .version(packageVersion())
    .option(NO_COLOR_FLAG, 'draw the terminal UI without colours, in any command (as NO_COLOR=1 does)')
    .showHelpAfterError('(run with --help to see the options)')
    .exitOverride()
    .configureOutput({ writeOut: ctx.stdout, writeErr: ctx.stderr });
  const named = commandNamed(argv);
  for (const entry of COMMANDS) {
    const command = program.command(entry.name).description(entry.description);
    if (entry === named) (await entry.load())(command, ctx);
  }

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

/**
 * Writes to a terminal that may have gone away (a closed SSH session): losing a progress line
 * is fine, crashing mid-run over it is not.
 */
function writeTo(stream: NodeJS.WriteStream): (text: string) => void {
  stream.on('error', () => undefined);
  return (text) => {
    try {
      stream.write(text);
    } catch {
      // The terminal is gone; the event log still has everything.
    }
  };
}
