import { statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { errorMessage } from '../../errors/error-message.js';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { PROJECT_FILE_NAME } from './config-locations.js';
import { configTemplate, goalTemplate } from './config-template.js';
import { runFlagDefaults } from '../run-setting-options.js';

const GOAL_FILE_NAME = 'GOAL.md';

interface InitFlags {
  readonly repo: string;
}

export function defineInitCommand(command: Command, ctx: CommandContext): void {
  command.option('--repo <dir>', 'the repository to set up', '.').action((flags: InitFlags) => {
    ctx.exitCode = init(ctx, flags);
  });
}

function init(ctx: CommandContext, flags: InitFlags): number {
  const repoDir = resolve(ctx.cwd, flags.repo);
  if (!isDirectory(repoDir)) {
    usageError(ctx, `${repoDir} is not a directory.`, 'Pass the repository to set up with --repo, or run colony init inside it.');
    return ctx.exitCode;
  }
  const files = [
    { path: join(repoDir, PROJECT_FILE_NAME), text: configTemplate(runFlagDefaults(ctx)) },
    { path: join(repoDir, GOAL_FILE_NAME), text: goalTemplate() },
  ];
  // Both are checked before either is written, so a refusal leaves the repository as it was.
  const existing = files.find((file) => exists(file.path));
  if (existing !== undefined) {
    usageError(ctx, `${existing.path} already exists, and colony init does not overwrite it.`, 'Move it aside to start from the template, or edit it as it is; colony init writes nothing while either file is there.');
    return ctx.exitCode;
  }
  for (const file of files) {
    try {
      writeFileSync(file.path, file.text, { flag: 'wx' });
    } catch (error) {
      usageError(ctx, `${file.path} cannot be written: ${errorMessage(error)}.`);
      return ctx.exitCode;
    }
  }
  ctx.stdout(
    [
      `colony init wrote, in ${repoDir}:`,
      `  ${PROJECT_FILE_NAME}  every setting of colony run, commented out with its default`,
      `  ${GOAL_FILE_NAME}      a template for the goal, saying what to write`,
      '',
      'Next:',
      `  1. Write the goal in ${GOAL_FILE_NAME}: what to build, its requirements, how to check it, when it is done.`,
      `  2. Uncomment the settings this project needs in ${PROJECT_FILE_NAME} (the model first; never an API key),`,
      '     and check them with colony config, which shows what a run would use and where each setting comes from.',
      `  3. Commit both: git add ${PROJECT_FILE_NAME} ${GOAL_FILE_NAME} && git commit -m "Set up colony"`,
      `  4. colony run ${GOAL_FILE_NAME}`,
      '',
    ].join('\n'),
  );
  return EXIT_OK;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
