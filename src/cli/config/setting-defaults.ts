import { parsedLiteral } from './value-text.js';
import type { Setting } from './types.js';

/** What a setting is when nothing gives it: a value as the file would write it, or what its absence means with a value to show. */
export type SettingDefault = { readonly literal: string } | { readonly means: string; readonly example: string };

/**
 * The default of `setting`, from its flag's default (`flagDefault`, what commander holds when
 * the flag is not given) or, for a flag without one, from the run settings it stands for.
 */
export function settingDefault(setting: Setting, flagDefault: unknown): SettingDefault {
  if (flagDefault !== undefined) return { literal: parsedLiteral(setting.kind, flagDefault) };
  if (setting.defaultLiteral !== undefined) return { literal: setting.defaultLiteral };
  if (setting.unset !== undefined) return setting.unset;
  throw new Error(`the setting for ${setting.flag} has no default: its flag gives none, and the table neither a defaultLiteral nor what unset means`);
}
