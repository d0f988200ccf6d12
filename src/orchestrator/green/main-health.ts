import type { EventStore } from '../../store/events/event-store.js';

/** main as its last green snapshot found it, when that snapshot failed. */
export interface RedMain {
  /** The commit the snapshot checked. */
  readonly commit: string;
  /** The check command it ran. */
  readonly command: string;
  /** Its failure lines, normalised (see `failureLines`). */
  readonly failures: readonly string[];
}

/**
 * How main stands by the green loop's last snapshot, kept current from the event log (by any
 * process writing to the store): what workers are told is failing already, before their work
 * lands. One per run, shared by its workers.
 */
export interface MainHealth {
  /** The last snapshot when it failed; null when it passed or none was taken. */
  red(): Promise<RedMain | null>;
}

export function createMainHealth(events: EventStore, runId: string): MainHealth {
  let lastSeq = 0;
  let red: RedMain | null = null;
  return {
    async red() {
      for (const event of await events.read({ runId, afterSeq: lastSeq, types: ['green.checked'] })) {
        // Workers ask at once: a read that ends after a later one has nothing new to fold.
        if (event.seq <= lastSeq) continue;
        lastSeq = event.seq;
        if (event.type !== 'green.checked') continue;
        const { passed, commit, command, failures } = event.data;
        red = passed ? null : { commit, command, failures };
      }
      return red;
    },
  };
}

/**
 * Which of `lines` (a check's failure lines) main already showed in `before`: the failures a
 * worker's merge did not bring, and the rest, which it may have.
 */
export function splitByRedMain(lines: readonly string[], before: RedMain | null): { readonly already: string[]; readonly fresh: string[] } {
  const known = new Set(before?.failures ?? []);
  return { already: lines.filter((line) => known.has(line)), fresh: lines.filter((line) => !known.has(line)) };
}
