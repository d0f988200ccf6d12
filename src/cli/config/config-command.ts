import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EXIT_OK, usageError, type CommandContext } from '../command-context.js';
import { configureCommand, FIX_HINT, type ConfiguredSetting, type ConfigFileSeen } from './configured-flags.js';
import { settingDefault } from './setting-defaults.js';
import { settingName, settingVariable } from './setting-table.js';
import { parsedLiteral } from './value-text.js';
import type { SettingSource } from './types.js';
import { runSettingOptions } from '../run-setting-options.js';

interface ConfigFlags {
  readonly repo: string;
  readonly json?: boolean;
}

export function defineConfigCommand(command: Command, ctx: CommandContext): void {
  command
    .option('--repo <dir>', 'the repository whose colony.toml is read', '.')
    .option('--json', 'print the settings as JSON');
  // Every setting flag of `colony run`, so `colony config --workers 3` shows what that run would use.
  for (const option of runSettingOptions(ctx)) command.addOption(option);
  command.action((flags: ConfigFlags, self: Command) => {
    ctx.exitCode = config(ctx, flags, self);
  });
}

function config(ctx: CommandContext, flags: ConfigFlags, command: Command): number {
  const repoDir = resolve(ctx.cwd, flags.repo);
  if (!existsSync(repoDir)) {
    usageError(ctx, `${repoDir} does not exist.`, 'Pass the repository whose settings to show with --repo, or run colony config inside it.');
    return ctx.exitCode;
  }
  const configured = configureCommand(command, ctx.env, repoDir);
  if (!configured.ok) {
    usageError(ctx, configured.error, configured.hint ?? FIX_HINT);
    return ctx.exitCode;
  }
  for (const warning of configured.warnings) ctx.stderr(`${warning}\n`);
  if (flags.json === true) {
    const settings = configured.settings.map((each) => ({
      name: settingName(each.setting),
      flag: each.setting.flag,
      variable: settingVariable(each.setting),
      value: each.value ?? null,
      shown: shownValue(each),
      source: each.source,
    }));
    ctx.stdout(`${JSON.stringify({ repo: repoDir, files: configured.files, settings }, null, 2)}\n`);
    return EXIT_OK;
  }
  ctx.stdout(formatSettings(repoDir, configured.files, configured.settings));
  return EXIT_OK;
}

/** The settings as a table: name, value as a file would write it, and where it came from. */
function formatSettings(repoDir: string, files: readonly ConfigFileSeen[], settings: readonly ConfiguredSetting[]): string {
  const order = ['flags', 'COLONY_* variables', ...files.map((file) => `${file.file}${file.found ? '' : ' (none there)'}`), 'defaults'];
  const rows = settings.map((each) => [settingName(each.setting), shownValue(each), sourceText(each.source)] as const);
  const nameWidth = Math.max(...rows.map(([name]) => name.length));
  const valueWidth = Math.min(40, Math.max(...rows.map(([, value]) => value.length)));
  const lines = rows.map(([name, value, source]) => `  ${name.padEnd(nameWidth)}  ${value.padEnd(valueWidth)}  ${source}`);
  return [`Settings of colony run in ${repoDir}, each from the first of: ${order.join(', ')}.`, '', ...lines, ''].join('\n');
}

function shownValue({ setting, source, value }: ConfiguredSetting): string {
  if (source.kind !== 'default') return parsedLiteral(setting.kind, value);
  const shown = settingDefault(setting, value);
  return 'literal' in shown ? shown.literal : `(${shown.means})`;
}

function sourceText(source: SettingSource): string {
  switch (source.kind) {
    case 'flag':
      return `flag ${source.flag}`;
    case 'environment':
      return source.variable;
    case 'project-file':
    case 'user-file':
      return source.file;
    case 'default':
      return 'default';
  }
}
