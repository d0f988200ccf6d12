import type { ColonyEvent } from '../../events/event-types.js';
import type { HostStatus } from './types.js';

/** The hosts of a run as its log tells them: worker hosts joining and leaving, and which host claimed each task last. */
export interface HostFold {
  add(event: ColonyEvent): void;
  /** The worker host that claimed the task last, or null when the run's own process did (or none did). */
  hostOfTask(taskId: string): string | null;
  /** Every worker host that joined the run, in the order they first joined. */
  hosts(): HostStatus[];
}

/**
 * The host in a lease holder's name: a worker host's runner holds leases as `<host>/<runner>`
 * (see `runWorkerHost`), the run's own process as a bare runner id.
 */
export function hostOfHolder(holder: string): string | null {
  const slash = holder.indexOf('/');
  return slash <= 0 ? null : holder.slice(0, slash);
}

export function createHostFold(): HostFold {
  const hosts = new Map<string, { -readonly [K in keyof HostStatus]: HostStatus[K] }>();
  const claimedBy = new Map<string, string | null>();
  return {
    add(event) {
      switch (event.type) {
        case 'host.joined':
          // A host that comes back (the run resumed) keeps the count of what it let go before.
          hosts.set(event.data.host, { name: event.data.host, workers: event.data.workers, origin: event.data.origin, state: 'working', reason: null, since: event.ts, released: hosts.get(event.data.host)?.released ?? 0 });
          return;
        case 'host.left': {
          const host = hosts.get(event.data.host);
          if (host === undefined) return;
          host.state = 'left';
          host.reason = event.data.reason;
          host.since = event.ts;
          host.released += event.data.released;
          return;
        }
        case 'task.claimed':
          claimedBy.set(event.data.taskId, hostOfHolder(event.data.holder));
          return;
        case 'run.resumed':
          // The run's process went away and came back: the hosts that worked on it then had left it.
          for (const host of hosts.values()) if (host.state === 'working') Object.assign(host, { state: 'left', reason: "the run's process went away", since: event.ts });
          return;
        default:
          return;
      }
    },
    hostOfTask: (taskId) => claimedBy.get(taskId) ?? null,
    hosts: () => [...hosts.values()].map((host) => ({ ...host })),
  };
}
