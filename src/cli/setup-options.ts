import type { Command } from 'commander';
import { commandText } from './command-context.js';
import type { SetupCommand } from '../workspace/dependencies/setup-command-inputs.js';

/** `--setup` and `--setup-inputs`: a project's own setup, in place of npm's install. */
export interface SetupFlags {
  readonly setup?: string;
  /** Each use of the flag, as given: comma-separated paths. */
  readonly setupInputs?: readonly string[];
}

export function addSetupOptions(command: Command): Command {
  return command
    .option(
      '--setup <command>',
      "prepare the project's environment with this command (uv sync, cargo fetch, go mod download), run once per hash of --setup-inputs in the sandbox with the network; what it makes is shared by every workspace (default: npm's install, for a project with package.json)",
      commandText,
    )
    .option(
      '--setup-inputs <paths>',
      'the files (or folders) of the repository the setup reads, such as uv.lock (comma-separated, repeatable): the setup runs again when one of them changes',
      (value: string, previous: readonly string[] = []) => [...previous, value],
    );
}

/** The setup the flags ask for, null for none, or why they cannot be taken. */
export function setupOf(flags: SetupFlags): { readonly ok: true; readonly setup: SetupCommand | null } | { readonly ok: false; readonly error: string } {
  const inputs = (flags.setupInputs ?? []).flatMap((value) => value.split(',')).map((path) => path.trim()).filter((path) => path !== '');
  if (flags.setup === undefined) {
    if (inputs.length > 0) return { ok: false, error: '--setup-inputs names the files a setup command reads, and no --setup command was given: give the command with --setup (or setup in colony.toml).' };
    return { ok: true, setup: null };
  }
  return { ok: true, setup: { command: flags.setup, inputs } };
}
