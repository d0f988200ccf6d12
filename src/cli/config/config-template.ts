import { readFileSync } from 'node:fs';
import { settingDefault } from './setting-defaults.js';
import { SETTINGS, TABLES } from './setting-table.js';
import type { Setting } from './types.js';

const HEADER = [
  "# colony.toml: the settings of `colony run` for this repository, shared by everyone who runs",
  '# colony here. Every setting is below, commented out with its default: uncomment and change',
  '# the ones this project needs. `colony run --help` says more about each (the flag of',
  '# `workers` is --workers, of `usd` in [budget] --budget-usd).',
  '#',
  '# What wins: a flag on the command line, then a COLONY_* variable (COLONY_WORKERS=2,',
  '# COLONY_BUDGET_USD=5), then this file, then your own file ($XDG_CONFIG_HOME/colony/config.toml,',
  '# else ~/.config/colony/config.toml, with the same keys), then the defaults.',
  '# `colony config` shows what a run would use and where each setting came from.',
  '#',
  '# No API keys here: keep the key in an environment variable and name it with api-key-env.',
  '# File names (prices) are relative to this file.',
];

/**
 * The commented `colony.toml` that `colony init` writes: every setting, commented out with its
 * default (or, for one without a default, what leaving it out means and a value to show) and a
 * line saying what it does. `flagDefault` gives each setting's flag's own default, as `colony run`
 * holds it, so the file shows the defaults a run goes by.
 */
export function configTemplate(flagDefault: (setting: Setting) => unknown): string {
  const lines = [...HEADER];
  const section = (settings: readonly Setting[]) => {
    for (const setting of settings) {
      const shown = settingDefault(setting, flagDefault(setting));
      const meaning = `${setting.meaning.charAt(0).toUpperCase()}${setting.meaning.slice(1)}`;
      lines.push('', `# ${meaning}.${'means' in shown ? ` Default: ${shown.means}.` : ''}`, `# ${setting.key} = ${'literal' in shown ? shown.literal : shown.example}`);
    }
  };
  section(SETTINGS.filter((setting) => setting.table === undefined));
  for (const table of TABLES) {
    lines.push('', `# ${table.meaning.charAt(0).toUpperCase()}${table.meaning.slice(1)}.`, `[${table.name}]`);
    section(SETTINGS.filter((setting) => setting.table === table.name));
  }
  return `${lines.join('\n')}\n`;
}

/** The `GOAL.md` that `colony init` writes: the parts of a goal, each saying what to write there. */
export function goalTemplate(): string {
  return readFileSync(new URL('./goal-template.md', import.meta.url), 'utf8');
}
