import { InvalidArgumentError, type Command } from 'commander';
import { describeGreenEvery, parseGreenEvery } from '../orchestrator/green/green-settings.js';
import { commandText, positiveNumber } from './command-context.js';
import { DEFAULT_GREEN_SETTINGS, type GreenSettings, type RunSettingsInput } from '../events/run-settings.js';

/** The flags of `colony run` for the green loop. */
export interface GreenFlags {
  readonly check?: string;
  readonly greenEvery?: { readonly everyCommits: number | null; readonly everyMs: number | null };
  readonly greenBranch?: string;
  readonly greenTag?: boolean;
  readonly checkTimeout?: number;
}

export function addGreenOptions(command: Command): Command {
  return command
    .option('--check <command>', "the project's check, run on snapshots of main (default: the goal's colony-spec test command, else npm test, make test, ... as the project has)", commandText)
    .option(
      '--green-every <when>',
      `snapshot main after N landed commits, after M minutes (Mm) when main moved, both (N,Mm: whichever comes first), or off (only the release snapshot at the end) (default ${DEFAULT_GREEN_SETTINGS.everyCommits},${DEFAULT_GREEN_SETTINGS.everyMs === null ? '' : `${DEFAULT_GREEN_SETTINGS.everyMs / 60_000}m`})`,
      greenEvery,
    )
    .option('--green-branch <name>', `the branch a passing snapshot moves forward, fast-forward only (default: ${DEFAULT_GREEN_SETTINGS.branch} beside the branch checked out, <trunk>-green beside any other trunk; git must take it as a branch name, and it cannot be the trunk)`)
    .option('--green-tag', 'tag every commit the green branch moves to (<branch>-1, <branch>-2, ...)')
    .option('--check-timeout <minutes>', `stop a check that runs longer than this and count it as failing (default ${DEFAULT_GREEN_SETTINGS.checkTimeoutMs / 60_000})`, positiveNumber('a number of minutes such as 15 or 0.5'));
}

/** The green settings the flags ask for; what they leave out takes the run settings' default. */
export function greenSettingsOf(flags: GreenFlags): RunSettingsInput['green'] {
  return {
    check: flags.check,
    everyCommits: flags.greenEvery?.everyCommits,
    everyMs: flags.greenEvery?.everyMs,
    branch: flags.greenBranch,
    tag: flags.greenTag === true,
    checkTimeoutMs: flags.checkTimeout === undefined ? undefined : Math.max(1_000, Math.round(flags.checkTimeout * 60_000)),
  };
}

/** One line for the run's start: `green: every 10 commits or 10 min, check from the goal, branch green`. */
export function describeGreenSettings(settings: GreenSettings): string {
  const check = settings.check === null ? "the project's own check" : `\`${settings.check}\``;
  return `green loop: ${describeGreenEvery(settings)}, ${check}, branch ${settings.branch}${settings.tag ? ' (tagged)' : ''}`;
}

function greenEvery(value: string): { everyCommits: number | null; everyMs: number | null } {
  const parsed = parseGreenEvery(value);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.error);
  return { everyCommits: parsed.everyCommits, everyMs: parsed.everyMs };
}
