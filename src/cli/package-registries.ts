import { existsSync, readFileSync } from 'node:fs';
import { npmrcRegistries, yarnrcRegistries, yarnrcYmlRegistries } from '../workspace/dependencies/registry-config.js';
import { join } from 'node:path';

/** The npm registry, which npm and pnpm use when nothing names another. */
const DEFAULT_REGISTRY_HOST = 'registry.npmjs.org';
/** Yarn's mirror of it, which yarn (1 and later) uses by default and writes into yarn.lock. */
const YARN_REGISTRY_HOST = 'registry.yarnpkg.com';

/**
 * The hosts of the package registries a project's configuration names, for `--network
 * registries` and the setup's install: npm's default, every `registry=` and `@scope:registry=`
 * of the repository's `.npmrc` (which pnpm reads too), yarn's default for a project that uses
 * yarn (a `yarn.lock`, `.yarnrc` or `.yarnrc.yml`), the `registry` of its `.yarnrc`,
 * `npmRegistryServer` and `npmScopes` servers of its `.yarnrc.yml`, and `npm_config_registry`
 * from the environment. A file that is not there names none.
 */
export function packageRegistryHosts(repoDir: string, env: Readonly<Record<string, string | undefined>>): string[] {
  const named = [npmrcRegistries(read(join(repoDir, '.npmrc'))), yarnrcRegistries(read(join(repoDir, '.yarnrc'))), yarnrcYmlRegistries(read(join(repoDir, '.yarnrc.yml')))];
  const addresses = [
    ...named.flatMap((registries) => [...(registries.main === null ? [] : [registries.main]), ...registries.scoped]),
    ...[env['npm_config_registry'], env['NPM_CONFIG_REGISTRY']].filter((value): value is string => value !== undefined && value !== ''),
  ];
  const usesYarn = ['yarn.lock', '.yarnrc', '.yarnrc.yml'].some((name) => existsSync(join(repoDir, name)));
  const hosts = usesYarn ? [DEFAULT_REGISTRY_HOST, YARN_REGISTRY_HOST] : [DEFAULT_REGISTRY_HOST];
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

/** A configuration file's text; empty when it is not there. */
function read(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
