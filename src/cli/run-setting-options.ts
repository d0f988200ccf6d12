import { Command, type Option } from 'commander';
import { SETTINGS } from './config/setting-table.js';
import type { Setting } from './config/types.js';
import type { CommandContext } from './command-context.js';
import { defineRunCommand } from './commands/run.js';

/**
 * The options of `colony run` that stand for settings, taken from run's own definition so that
 * `colony config` parses them with the same parsers and `colony init` shows the same defaults.
 */
export function runSettingOptions(ctx: CommandContext): readonly Option[] {
  const run = new Command('run');
  defineRunCommand(run, ctx);
  return run.options.filter((option) => SETTINGS.some((setting) => setting.flag === option.long));
}

/** The default `colony run`'s flag for `setting` has of its own: what commander holds when the flag is not given. */
export function runFlagDefaults(ctx: CommandContext): (setting: Setting) => unknown {
  const run = new Command('run');
  defineRunCommand(run, ctx);
  return (setting) => {
    const option = run.options.find((each) => each.long === setting.flag);
    return option === undefined ? undefined : run.getOptionValue(option.attributeName());
  };
}
