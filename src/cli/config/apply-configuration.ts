import { resolve } from 'node:path';
import type { Command } from 'commander';
import { createSecretRedactor, secretsInEnvironment } from '../../events/secret-redaction.js';
import { runStateSecrets } from '../../orchestrator/setup/run-state.js';
import { usageError, type CommandContext } from '../command-context.js';
import { configureCommand, FIX_HINT } from './configured-flags.js';

/**
 * The flags of a parsed `command` with what its command line left out taken from the
 * environment and the configuration files (see configureCommand), and the context to run it
 * in; or null after a usage error that says what is wrong in which file or variable (exit 2).
 * The context keeps the key of an `api-key-env` a file or variable named out of everything the
 * command prints and records, as `--api-key-env` on the command line is, and the password of a
 * `--store` URL too.
 */
export function applyConfiguration<Flags extends { readonly repo?: string }>(ctx: CommandContext, command: Command): { readonly ctx: CommandContext; readonly flags: Flags } | null {
  // A command that works on no repository (`colony worker`) reads the configuration where it is started.
  const repoDir = resolve(ctx.cwd, command.opts<{ repo?: string }>().repo ?? '.');
  const configured = configureCommand(command, ctx.env, repoDir);
  if (!configured.ok) {
    usageError(ctx, configured.error, configured.hint ?? FIX_HINT);
    return null;
  }
  for (const warning of configured.warnings) ctx.stderr(`${warning}\n`);
  const keyVariable = configured.settings.find(({ setting, source }) => setting.key === 'api-key-env' && source.kind !== 'flag')?.value;
  const flags = command.opts<Flags>();
  const store = command.opts<{ store?: unknown }>().store;
  const secrets = [
    ...(typeof keyVariable === 'string' ? secretsInEnvironment({ [keyVariable]: ctx.env[keyVariable] }, [keyVariable]) : []),
    ...(typeof store === 'string' ? runStateSecrets({ storeUrl: store }) : []),
  ];
  return { ctx: withSecrets(ctx, secrets), flags };
}

/** `ctx` keeping `secrets` out of what it prints, and telling the command to keep them out of what it records. */
function withSecrets(ctx: CommandContext, secrets: readonly string[]): CommandContext {
  if (secrets.length === 0) return ctx;
  const redactor = createSecretRedactor(secrets);
  return {
    ...ctx,
    stdout: (text) => ctx.stdout(redactor.redactText(text)),
    stderr: (text) => ctx.stderr(redactor.redactText(text)),
    secrets: [...(ctx.secrets ?? []), ...secrets],
  };
}
