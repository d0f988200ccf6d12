import type { Handoff } from '../../events/handoff.js';

/** What a role's run on one task ends with: the agent that ran and the task's one handoff. */
export interface TaskExecution {
  readonly agentId: string;
  readonly handoff: Handoff;
}
