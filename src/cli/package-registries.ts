import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The npm registry, which npm, pnpm and yarn use when nothing names another. */
const DEFAULT_REGISTRY_HOST = 'registry.npmjs.org';

/**
 * The hosts of the package registries a project's configuration names, for `--network
 * registries`: npm's default, every `registry=` and `@scope:registry=` of the repository's
 * `.npmrc` (which pnpm reads too), `npmRegistryServer` and `npmScopes` servers of its
 * `.yarnrc.yml`, and `npm_config_registry` from the environment. A file that is not there names
 * none.
 */
export function packageRegistryHosts(repoDir: string, env: Readonly<Record<string, string | undefined>>): string[] {
  const addresses = [
    ...lines(join(repoDir, '.npmrc')).flatMap((line) => /^\s*(?:@[^:\s]+:)?registry\s*=\s*(\S+)/.exec(line)?.[1] ?? []),
    ...lines(join(repoDir, '.yarnrc.yml')).flatMap((line) => /^\s*npmRegistryServer:\s*["']?([^"'\s]+)/.exec(line)?.[1] ?? []),
    ...[env['npm_config_registry'], env['NPM_CONFIG_REGISTRY']].filter((value): value is string => value !== undefined && value !== ''),
  ];
  const hosts = [DEFAULT_REGISTRY_HOST];
  for (const address of addresses) {
    let host: string;
    try {
      host = new URL(address).hostname;
    } catch {
      continue;
    }
    if (host !== '' && !hosts.includes(host)) hosts.push(host);
  }
  return hosts;
}

function lines(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').split(/\r?\n/);
  } catch {
    return [];
  }
}
