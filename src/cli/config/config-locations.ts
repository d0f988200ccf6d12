import { isAbsolute, join } from 'node:path';

/** The project's file: at the root of the repository, committed and shared by everyone who runs colony there. */
export const PROJECT_FILE_NAME = 'colony.toml';

/** Where colony looks for its two configuration files. */
export interface ConfigLocations {
  /** `<repo>/colony.toml`. */
  readonly project: string;
  /**
   * `$XDG_CONFIG_HOME/colony/config.toml`, else `~/.config/colony/config.toml`; null when the
   * environment names no home (then there is no user file).
   */
  readonly user: string | null;
}

export function configLocations(env: Readonly<Record<string, string | undefined>>, repoDir: string): ConfigLocations {
  const xdg = env['XDG_CONFIG_HOME'];
  const home = env['HOME'];
  // The XDG specification has a relative XDG_CONFIG_HOME ignored, as if it were unset.
  const base = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : home !== undefined && home !== '' ? join(home, '.config') : null;
  return { project: join(repoDir, PROJECT_FILE_NAME), user: base === null ? null : join(base, 'colony', 'config.toml') };
}
