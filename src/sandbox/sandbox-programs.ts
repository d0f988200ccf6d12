import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Where programs are looked for when no directories are given: PATH, then the usual places. */
export function defaultProgramDirectories(environment: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const fromPath = (environment.PATH ?? '').split(delimiter).filter((directory) => directory.startsWith('/'));
  return [...new Set([...fromPath, '/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin'])];
}

/** The first executable `name` in `directories`, as an absolute path, or null. */
export function findProgram(name: string, directories: readonly string[]): string | null {
  for (const directory of directories) {
    const path = join(directory, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not here.
    }
  }
  return null;
}

/** Which package provides each program the confinements run, for the fix a person is told. */
export const PROGRAM_PACKAGES: Readonly<Record<string, string>> = {
  bwrap: 'bubblewrap',
  setpriv: 'util-linux',
  prlimit: 'util-linux',
  unshare: 'util-linux',
  mount: 'mount',
  ip: 'iproute2',
};

/** The programs `names` as absolute paths, or the fix naming the packages of those missing. */
export function findPrograms<Name extends string>(
  names: readonly Name[],
  directories: readonly string[],
): { ok: true; programs: Record<Name, string> } | { ok: false; error: string; fix: string } {
  const programs = {} as Record<Name, string>;
  const missing: Name[] = [];
  for (const name of names) {
    const path = findProgram(name, directories);
    if (path === null) missing.push(name);
    else programs[name] = path;
  }
  if (missing.length === 0) return { ok: true, programs };
  const packages = [...new Set(missing.map((name) => PROGRAM_PACKAGES[name] ?? name))];
  return {
    ok: false,
    // Where it looked is PATH and the system's sbin folders: a long list that tells the user nothing the fix does not.
    error: `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not installed`,
    fix: `install ${packages.join(' and ')}: \`apt-get install ${packages.join(' ')}\` on Debian and Ubuntu, \`dnf install ${packages.join(' ')}\` on Fedora`,
  };
}
