/**
 * The package registries a project's configuration files name, read the way each package
 * manager reads its own: the registry it installs from (`main`, null when the file names none)
 * and those it uses for some scopes of packages (`scoped`).
 */
export interface NamedRegistries {
  readonly main: string | null;
  readonly scoped: readonly string[];
}

function lines(text: string): string[] {
  return text.split(/\r?\n/);
}

/** npm's and pnpm's `.npmrc`: `registry=…`, and `@scope:registry=…` for a scope. */
export function npmrcRegistries(text: string): NamedRegistries {
  let main: string | null = null;
  const scoped: string[] = [];
  for (const line of lines(text)) {
    const match = /^\s*(@[^:\s]+:)?registry\s*=\s*(\S+)/.exec(line);
    if (match === null) continue;
    if (match[1] === undefined) main ??= match[2] ?? null;
    else scoped.push(match[2] as string);
  }
  return { main, scoped };
}

/** yarn 1's `.yarnrc`: `registry "…"` (its scopes come from `.npmrc`). */
export function yarnrcRegistries(text: string): NamedRegistries {
  return { main: /^\s*registry\s+["']?([^"'\s]+)/m.exec(text)?.[1] ?? null, scoped: [] };
}

/**
 * yarn 2+'s `.yarnrc.yml`: the top-level `npmRegistryServer`, and the indented ones of its
 * `npmScopes` entries.
 */
export function yarnrcYmlRegistries(text: string): NamedRegistries {
  let main: string | null = null;
  const scoped: string[] = [];
  for (const line of lines(text)) {
    const match = /^(\s*)npmRegistryServer:\s*["']?([^"'\s]+)/.exec(line);
    if (match === null) continue;
    if (match[1] === '') main ??= match[2] ?? null;
    else scoped.push(match[2] as string);
  }
  return { main, scoped };
}
