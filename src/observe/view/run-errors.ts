import { isStoppedReason } from '../../events/agent-stops.js';
import type { ColonyEvent } from '../../events/event-types.js';

/** What went wrong, of the things a run recovers from or reports. */
export type ErrorKind =
  | 'model-retry'
  | 'model-failure'
  | 'provider-parked'
  | 'tool-failure'
  | 'agent-failure'
  | 'hung'
  | 'merge-conflict'
  | 'acceptance-failure'
  | 'compaction-failure';

export interface ErrorEntry {
  readonly seq: number;
  readonly ts: number;
  readonly agentId: string;
  readonly kind: ErrorKind;
  /** One line: what failed and why. */
  readonly message: string;
}

/** Errors and retries of a run: counts by kind, and the latest few to read. */
export interface RunErrors {
  readonly counts: Readonly<Record<ErrorKind, number>>;
  /** The latest entries, oldest first. */
  readonly recent: readonly ErrorEntry[];
}

export interface RunErrorsFold {
  add(event: ColonyEvent): void;
  snapshot(): RunErrors;
}

const MESSAGE_CHARS = 160;

export function createRunErrorsFold(keepRecent = 50): RunErrorsFold {
  const counts: Record<ErrorKind, number> = {
    'model-retry': 0,
    'model-failure': 0,
    'provider-parked': 0,
    'tool-failure': 0,
    'agent-failure': 0,
    hung: 0,
    'merge-conflict': 0,
    'acceptance-failure': 0,
    'compaction-failure': 0,
  };
  const recent: ErrorEntry[] = [];
  const note = (event: ColonyEvent, kind: ErrorKind, message: string): void => {
    counts[kind] += 1;
    const line = message.replace(/\s+/g, ' ').trim();
    recent.push({ seq: event.seq, ts: event.ts, agentId: event.agentId, kind, message: line.length > MESSAGE_CHARS ? `${line.slice(0, MESSAGE_CHARS - 1)}…` : line });
    if (recent.length > keepRecent) recent.shift();
  };
  return {
    add(event) {
      switch (event.type) {
        case 'model.retried':
          note(event, 'model-retry', `attempt ${event.data.attempt}: ${event.data.kind}: ${event.data.message}`);
          return;
        case 'model.failed':
          note(event, 'model-failure', `${event.data.kind} after ${event.data.attempts} attempt(s): ${event.data.message}`);
          return;
        case 'agent.parked':
          note(event, 'provider-parked', `${event.data.kind}: ${event.data.message}`);
          return;
        case 'tool.ended':
          if (!event.data.ok) note(event, 'tool-failure', `${event.data.name}: ${event.data.output}`);
          return;
        case 'agent.failed':
          // A stopped agent did not fail: a stopped run's agents would count as failures after its resume.
          if (!isStoppedReason(event.data.reason)) note(event, 'agent-failure', event.data.reason);
          return;
        case 'agent.hung':
          note(event, 'hung', `${event.data.hungAgentId} recorded nothing for ${Math.round(event.data.silentMs / 1000)} s`);
          return;
        case 'merge.conflicted':
          note(event, 'merge-conflict', `conflict in ${event.data.files.join(', ')}`);
          return;
        case 'acceptance.checked':
          if (!event.data.passed && event.data.skipped === null) note(event, 'acceptance-failure', `task ${event.data.taskId}: acceptance checks failed (claimed ${event.data.claimed})`);
          return;
        case 'context.compaction-failed':
          note(event, 'compaction-failure', event.data.reason);
          return;
        default:
          // The rest went as it should.
          return;
      }
    },
    snapshot: () => ({ counts: { ...counts }, recent: [...recent] }),
  };
}
