import { readCgroupSources, resolveCgroupLayout, type CgroupLayout, type CgroupSources } from '../../sandbox/cgroups/cgroup-layout.js';
import { openRunCgroups } from '../../sandbox/cgroups/cgroups.js';
import type { RunCgroupsOpening } from '../../sandbox/cgroups/types.js';
import { CGROUP_FIX, probeMountNamespace } from '../../sandbox/sandbox-probe.js';
import { defaultProgramDirectories, findProgram, findPrograms } from '../../sandbox/sandbox-programs.js';
import { openSandbox, type OpenSandboxOptions, type SandboxOpening } from '../../sandbox/sandbox.js';
import type { SandboxMethod } from '../../sandbox/types.js';
import { errorMessage } from '../../errors/error-message.js';
import { sandboxWarning } from '../sandbox-options.js';
import { fail, pass, warn, type DoctorCheck } from './types.js';

/** What the sandbox checks look at, passed in so each failure can be made in a test. */
export interface SandboxProbes {
  readonly platform: NodeJS.Platform;
  readonly isRoot: boolean;
  /** Where bwrap, setpriv, prlimit and the rest are looked for. */
  readonly programDirectories: readonly string[];
  /** `/proc/self/cgroup` and `/proc/self/mountinfo`; may throw where /proc cannot be read. */
  readonly readCgroupSources: () => CgroupSources;
  readonly openRunCgroups: (layout: CgroupLayout, runId: string) => RunCgroupsOpening;
  /** The run's own way to open the sandbox, test command and all (`openSandbox`). */
  readonly openSandbox: (options: OpenSandboxOptions) => Promise<SandboxOpening>;
  /** Why root cannot cover private directories for bubblewrap here, or null when it can (the run's own `probeMountNamespace`). */
  readonly mountNamespaceProblem: () => string | null;
}

export function systemSandboxProbes(env: Readonly<Record<string, string | undefined>>): SandboxProbes {
  return {
    platform: process.platform,
    isRoot: process.getuid?.() === 0,
    programDirectories: defaultProgramDirectories(env),
    readCgroupSources,
    openRunCgroups,
    openSandbox,
    mountNamespaceProblem: () => {
      const directories = defaultProgramDirectories(env);
      return probeMountNamespace({ unshare: findProgram('unshare', directories) ?? '', mount: findProgram('mount', directories) ?? '' });
    },
  };
}

const NONE_FIX = 'or choose --sandbox none to run commands unconfined';

/**
 * The sandbox `colony run --sandbox <method>` would open, checked in the steps it takes: its
 * programs, the cgroups for its limits, who agents' commands run as, and then the run's own
 * opening of the sandbox, whose test command must run confined. A step whose prerequisite
 * failed is not tried: its line would only repeat the failure above it.
 */
export async function checkSandbox(method: SandboxMethod, probes: SandboxProbes, runId: string): Promise<DoctorCheck[]> {
  if (method === 'none') {
    const warning = sandboxWarning({ method }) ?? '';
    return [warn('sandbox', warning.replace(/^colony: WARNING: /, '').trim(), 'leave --sandbox out to check the bubblewrap sandbox colony confines commands with by default')];
  }
  if (probes.platform !== 'linux') {
    return [fail('sandbox', `the ${method} sandbox needs Linux; this is ${probes.platform}`, `run colony on Linux, ${NONE_FIX}`)];
  }
  const checks: DoctorCheck[] = [];
  const programs = checkPrograms(method, probes.programDirectories);
  checks.push(programs);
  const identity = checkIdentity(method, probes.isRoot);
  checks.push(identity);
  const cgroups = await checkCgroups(probes, runId);
  checks.push(cgroups);
  if (!checks.some((check) => check.status === 'fail')) checks.push(await checkConfinement(method, probes, runId));
  return checks;
}

function checkPrograms(method: 'bubblewrap' | 'unshare', directories: readonly string[]): DoctorCheck {
  const names = method === 'bubblewrap' ? (['bwrap', 'setpriv', 'prlimit'] as const) : (['unshare', 'setpriv', 'prlimit', 'mount', 'ip'] as const);
  const found = findPrograms(names, directories);
  if (!found.ok) return fail('sandbox programs', `${found.error}, and the ${method} sandbox runs every command through them`, found.fix);
  const located: Readonly<Record<string, string>> = found.programs;
  return pass('sandbox programs', names.map((name) => located[name] ?? name).join(', '));
}

function checkIdentity(method: 'bubblewrap' | 'unshare', isRoot: boolean): DoctorCheck {
  if (isRoot) return pass('agent uids', "colony runs as root, so each agent's commands run as a uid of their own, with no capabilities");
  if (method === 'unshare') {
    return fail('agent uids', 'the unshare sandbox needs root: it switches each agent to its own uid and mounts in a new namespace', 'run colony as root, or use --sandbox bubblewrap, which works without root');
  }
  return warn(
    'agent uids',
    "colony is not root, so agents' commands run as your own uid (in bubblewrap, with your home directory hidden), not as a uid each",
    'run colony as root to give each agent a uid of its own, kept out of the others\' files',
  );
}

async function checkCgroups(probes: SandboxProbes, runId: string): Promise<DoctorCheck> {
  let sources: CgroupSources;
  try {
    sources = probes.readCgroupSources();
  } catch (error) {
    return fail('cgroups', `cannot read this process's cgroups: ${errorMessage(error)}`, CGROUP_FIX);
  }
  const layout = resolveCgroupLayout(sources);
  if (!layout.ok) return fail('cgroups', layout.error, CGROUP_FIX);
  const opened = probes.openRunCgroups(layout.layout, runId);
  if (!opened.ok) return fail('cgroups', opened.error, CGROUP_FIX);
  const description = opened.cgroups.description;
  await opened.cgroups.close();
  return pass('cgroups', `memory and process limits can be set: ${description}`);
}

async function checkConfinement(method: 'bubblewrap' | 'unshare', probes: SandboxProbes, runId: string): Promise<DoctorCheck> {
  const opened = await probes.openSandbox({ method, runId, programDirectories: probes.programDirectories });
  if (!opened.ok) return fail('sandbox', opened.error, opened.fix);
  await opened.sandbox.close();
  return pass('sandbox', `a test command ran confined: ${opened.sandbox.summary}`);
}
