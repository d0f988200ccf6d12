import { InvalidArgumentError, type Command } from 'commander';
import { startModelServer } from '../../model/server/model-server.js';
import { createSimLanguageModel } from '../../sim/sim-language-model.js';
import { parseSimSpec } from '../../sim/sim-options.js';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { errorMessage } from '../../errors/error-message.js';

interface SimServerFlags {
  readonly port: number;
  readonly host: string;
  readonly sim: string;
  /** Commander's `--no-prompt-cache`: true unless it is given. */
  readonly promptCache: boolean;
}

export function defineSimServerCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--port <port>', 'the port to listen on (0 picks a free one)', parsePort, 8787)
    .option('--host <host>', 'the address to listen on', '127.0.0.1')
    .option('--sim <spec>', 'the simulated model to serve, e.g. "sim?seed=7&bug=0.2"', 'sim')
    .option('--no-prompt-cache', "report the model's own input usage instead of billing it like the providers' prompt caches")
    .action(async (flags: SimServerFlags) => {
      ctx.exitCode = await serve(ctx, flags);
    });
}

async function serve(ctx: CommandContext, flags: SimServerFlags): Promise<number> {
  const sim = parseSimSpec(flags.sim);
  if (!sim.ok) {
    usageError(ctx, sim.error);
    return ctx.exitCode;
  }
  let server;
  try {
    server = await startModelServer({
      model: createSimLanguageModel(sim.options),
      host: flags.host,
      port: flags.port,
      promptCache: flags.promptCache,
    });
  } catch (error) {
    const reason = errorMessage(error);
    usageError(ctx, `cannot listen on ${flags.host}:${flags.port}: ${reason}`, 'Pick another port with --port, or --port 0 for any free one.');
    return ctx.exitCode;
  }
  ctx.stdout(
    [
      `colony sim-server: serving ${flags.sim}${flags.promptCache ? ', input billed by a simulated prompt cache' : ''}`,
      `  OpenAI-compatible: --model openai-compatible:sim --base-url ${server.url}/v1`,
      `  Anthropic:         --model anthropic:sim --base-url ${server.url}/v1 (any ANTHROPIC_API_KEY)`,
      'Ctrl-C stops it.',
      '',
    ].join('\n'),
  );
  if (!ctx.signal.aborted) {
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
  }
  await server.close();
  return EXIT_OK;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidArgumentError(`"${value}" is not a port number (0 to 65535).`);
  return port;
}
