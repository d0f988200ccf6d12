import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Bind, ConfinementPlan } from './confinement-plan.js';
import { pathStanding } from './command-path.js';
import type { HostLookup } from './command-path.js';
import type { MountLayout } from './mount-layout.js';

/**
 * The directories of the node install that runs the harness, as read-only binds at their own
 * paths: the executable's directory and, when it is an install prefix's `bin`, the prefix's
 * `lib/node_modules`, where `npm` and `npx` there lead. Nothing else of the prefix (its `share`
 * may be a home's `~/.local/share`). Empty when the executable cannot be found.
 */
export function harnessNodeBinds(nodeExecutable: string): Bind[] {
  let directory: string;
  try {
    directory = realpathSync(dirname(nodeExecutable));
  } catch {
    return [];
  }
  const binds: Bind[] = [{ source: directory, target: directory, writable: false }];
  if (basename(directory) !== 'bin') return binds;
  const modules = join(dirname(directory), 'lib', 'node_modules');
  if (isDirectory(modules)) binds.push({ source: modules, target: modules, writable: false });
  return binds;
}

/**
 * The binds that show the harness's node to a command whose view (`layout`, as `lookup` sees
 * the host) has its directory closed or gone (an nvm install under root's 0700 home), so `node`
 * and `npm` on the harness's PATH work for agents; none when the command reaches it already,
 * or when the confinement cannot make them. It can as the harness's own uid, or as root
 * covering the private directories on their way: bubblewrap opens its sources as the agent's
 * uid, which could not open these.
 */
export function harnessNodeBindsFor(
  plan: Pick<ConfinementPlan, 'identity' | 'coverPrivateDirectories'>,
  nodeExecutable: string,
  layout: MountLayout,
  lookup: HostLookup,
): Bind[] {
  if (plan.identity !== null && !plan.coverPrivateDirectories) return [];
  const binds = harnessNodeBinds(nodeExecutable);
  const [first] = binds;
  if (first === undefined || pathStanding(first.target, layout, lookup) === 'open') return [];
  return binds;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
