import { availableParallelism } from 'node:os';
import type { GreenSettings } from '../../events/run-settings.js';

export type GreenEveryResult =
  | { readonly ok: true; readonly everyCommits: number | null; readonly everyMs: number | null }
  | { readonly ok: false; readonly error: string };

const EVERY_EXAMPLES = 'e.g. 10 (commits), 15m (minutes), 10,15m (whichever comes first) or off';

/**
 * Reads `--green-every`: a count of landed commits, a number of minutes (`15m`), both joined by
 * a comma (whichever comes first), or `off` (no snapshots while the run goes; the release
 * snapshot at the end still runs).
 */
export function parseGreenEvery(text: string): GreenEveryResult {
  const value = text.trim().toLowerCase();
  if (value === 'off') return { ok: true, everyCommits: null, everyMs: null };
  let everyCommits: number | null = null;
  let everyMs: number | null = null;
  for (const part of value.split(',').map((each) => each.trim())) {
    const minutes = /^(\d+(?:\.\d+)?)m$/.exec(part);
    if (minutes !== null) {
      const ms = Math.round(Number(minutes[1]) * 60_000);
      if (everyMs !== null || ms < 1_000) return { ok: false, error: `--green-every "${text}": give at most one time, of at least one second (0.02m); ${EVERY_EXAMPLES}.` };
      everyMs = ms;
      continue;
    }
    if (/^\d+$/.test(part) && Number(part) > 0) {
      if (everyCommits !== null) return { ok: false, error: `--green-every "${text}" gives two commit counts: give one; ${EVERY_EXAMPLES}.` };
      everyCommits = Number(part);
      continue;
    }
    return { ok: false, error: `--green-every "${text}": "${part}" is neither a count of commits nor minutes like 15m; ${EVERY_EXAMPLES}.` };
  }
  return { ok: true, everyCommits, everyMs };
}

/** `--green-every` as the user would write it back: `10,10m`, `5`, `off`. */
export function describeGreenEvery(settings: Pick<GreenSettings, 'everyCommits' | 'everyMs'>): string {
  const parts = [
    settings.everyCommits === null ? null : `${settings.everyCommits} commits`,
    settings.everyMs === null ? null : `${Number((settings.everyMs / 60_000).toFixed(2))} min`,
  ].filter((part) => part !== null);
  return parts.length === 0 ? 'only at the end' : parts.join(' or ');
}

/** Bisect probes at once: half the cores, so the agents keep the rest; at least one, at most eight. */
export function defaultBisectParallel(): number {
  return Math.max(1, Math.min(8, Math.floor(availableParallelism() / 2)));
}
