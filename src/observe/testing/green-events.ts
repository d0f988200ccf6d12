import type { EventBody, EventData } from '../../events/event-types.js';

/* The green loop's events as colony records them, for tests of what reads them. */

export const GREEN_CHECK = 'npm test';

/** A green snapshot of `commit`: passed, or failed with the one failure line given. */
export function greenChecked(commit: string, passed: boolean, options: { trigger?: EventData<'green.checked'>['trigger']; landed?: number; failure?: string } = {}): EventBody {
  const failures = passed ? [] : [options.failure ?? 'not ok 1 - parses numbers'];
  return {
    type: 'green.checked',
    data: {
      commit,
      command: GREEN_CHECK,
      passed,
      exitCode: passed ? 0 : 1,
      timedOut: false,
      durationMs: 4_000,
      outputTail: passed ? 'ok' : failures.join('\n'),
      failures,
      trigger: options.trigger ?? 'landings',
      landed: options.landed ?? 1,
    },
  };
}

/** A bisect of the red snapshot of `snapshot` to `firstBad` (null: main failed so at the run's start), from the given task. */
export function greenBisected(
  snapshot: string,
  firstBad: string | null,
  owner: { taskId?: string; agentId?: string; plannerTaskId?: string; known?: boolean; failure?: string } = {},
): EventBody {
  return {
    type: 'green.bisected',
    data: {
      snapshot,
      good: null,
      firstBad,
      subject: firstBad === null ? '' : `Commit ${firstBad.slice(0, 4)}`,
      taskId: owner.taskId ?? null,
      agentId: owner.agentId ?? null,
      plannerTaskId: owner.plannerTaskId ?? null,
      failures: [owner.failure ?? 'not ok 1 - parses numbers'],
      checks: 3,
      durationMs: 9_000,
      known: owner.known ?? false,
    },
  };
}

/** The fix-up message about a failure bisected to `firstBad`, sent to the planner of `plannerTaskId`. */
export function greenReported(firstBad: string | null, plannerTaskId: string | null, failure = 'not ok 1 - parses numbers'): EventBody {
  return {
    type: 'green.reported',
    data: { firstBad, taskId: null, plannerTaskId, recipientTaskId: plannerTaskId, command: GREEN_CHECK, failures: [failure] },
  };
}

export function greenAdvanced(to: string, from: string | null = null, tag: string | null = null): EventBody {
  return { type: 'green.advanced', data: { branch: 'green', from, to, tag } };
}

export function greenBlocked(commit: string, reason: string): EventBody {
  return { type: 'green.blocked', data: { branch: 'green', commit, reason } };
}
