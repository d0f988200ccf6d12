import type { RecordedEvent } from '../../events/event-types.js';

/**
 * While a tool call runs, silence is judged against at least this: a command may legitimately
 * run 30 minutes (its own timeout kills it then), a merge check 10 and a task's acceptance
 * checks 30 in all, and none records anything until it ends.
 */
export const TOOL_CALL_GRACE_MS = 35 * 60_000;

/** What the watch found: the agent recorded nothing for `silentMs`, past `limitMs`. */
export interface Hang {
  readonly taskId: string;
  readonly agentId: string;
  readonly silentMs: number;
  readonly limitMs: number;
}

/**
 * Notices workers that stopped making progress. Every event an agent records counts as a sign
 * of life; a worker parked on its provider (rate limited, its circuit open) is waiting on
 * purpose and is not judged until it resumes; one running a tool call is judged against at
 * least TOOL_CALL_GRACE_MS, as commands bound their own time. Planners are not watched: waiting silently for
 * their children's handoffs is what they do.
 */
export interface HangWatch {
  /** Starts watching a task's worker from now. */
  watch(taskId: string): void;
  /** Told every event of the task's agent. */
  saw(taskId: string, event: RecordedEvent): void;
  forget(taskId: string): void;
  /** Counts now as a sign of life for every watched worker: they wait on colony itself (a full disk), not hang. */
  excuseAll(): void;
  /** The workers silent past the limit, each reported once. */
  check(): Hang[];
  /** The hang found for the task, or null. */
  hangOf(taskId: string): Hang | null;
}

export function createHangWatch(limitMs: number, now: () => number): HangWatch {
  const watched = new Map<string, { lastAt: number; agentId: string; parked: boolean; inToolCall: boolean }>();
  const found = new Map<string, Hang>();
  return {
    watch(taskId) {
      watched.set(taskId, { lastAt: now(), agentId: '', parked: false, inToolCall: false });
    },
    saw(taskId, event) {
      const entry = watched.get(taskId);
      if (entry === undefined) return;
      entry.lastAt = event.ts;
      entry.agentId = event.agentId;
      if (event.type === 'agent.parked') entry.parked = true;
      else if (event.type === 'agent.unparked') entry.parked = false;
      // Acceptance checks run commands after the agent ended, bounded like a tool call's.
      else if (event.type === 'tool.started' || event.type === 'acceptance.started') entry.inToolCall = true;
      else if (event.type === 'tool.ended' || event.type === 'acceptance.checked') entry.inToolCall = false;
    },
    forget(taskId) {
      watched.delete(taskId);
      found.delete(taskId);
    },
    excuseAll() {
      const at = now();
      for (const entry of watched.values()) entry.lastAt = Math.max(entry.lastAt, at);
    },
    check() {
      const at = now();
      const hangs: Hang[] = [];
      for (const [taskId, entry] of watched) {
        const silentMs = at - entry.lastAt;
        const limit = entry.inToolCall ? Math.max(limitMs, TOOL_CALL_GRACE_MS) : limitMs;
        if (entry.parked || found.has(taskId) || silentMs < limit) continue;
        const hang: Hang = { taskId, agentId: entry.agentId, silentMs, limitMs: limit };
        found.set(taskId, hang);
        hangs.push(hang);
      }
      return hangs;
    },
    hangOf: (taskId) => found.get(taskId) ?? null,
  };
}
