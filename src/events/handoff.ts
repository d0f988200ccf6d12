import { z } from 'zod';

/** How a task ended, as told by the agent that owned it (or by the system for a dead one). */
export const handoffStatusSchema = z.enum(['done', 'partial', 'blocked', 'failed']);
export type HandoffStatus = z.infer<typeof handoffStatusSchema>;

/** One acceptance command as the handoff reports it: whether it passed, and the end of its output. */
export const acceptanceResultSchema = z.object({
  command: z.string(),
  passed: z.boolean(),
  /** The exit code, or null when the command was killed (a timeout) or never started. */
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean().default(false),
  /** The last lines of its output (stdout and stderr interleaved), a few thousand characters at most. */
  outputTail: z.string(),
  /**
   * Of a failed command's failure lines, those main's last green check already showed before
   * the worker's first landing: failures its work did not bring. Absent when there were none
   * (main passed then, or the command passed).
   */
  alreadyFailing: z.array(z.string()).optional(),
  /** With `alreadyFailing`: its other failure lines, ones the worker's merge may have brought. */
  newFailures: z.array(z.string()).optional(),
});
export type AcceptanceResult = z.infer<typeof acceptanceResultSchema>;

/**
 * What colony found when it ran a task's acceptance commands on main at the worker's last
 * landed commit, after the worker ended and before its handoff was delivered: evidence next to
 * the claim. `skipped` says why nothing ran (nothing landed, or colony could not check the commit
 * out); then `passed` is false and `results` empty.
 */
export const acceptanceVerdictSchema = z.object({
  /** Main commit checked, or null when nothing ran. */
  commit: z.string().nullable(),
  /** Every command exited 0. */
  passed: z.boolean(),
  skipped: z.string().nullable().default(null),
  results: z.array(acceptanceResultSchema).default([]),
});
export type AcceptanceVerdict = z.infer<typeof acceptanceVerdictSchema>;

/** As much of a check's result as tells whose its failures are. */
export interface FailureOwnership {
  readonly passed: boolean;
  readonly alreadyFailing?: readonly string[] | undefined;
  readonly newFailures?: readonly string[] | undefined;
}

/**
 * A claim its checks contradict: the agent handed off `done`, the checks ran, and one failed
 * with a failure main did not already show before the worker's merge. A worker that said
 * partial, blocked or failed claimed nothing the checks could refute; nor did one whose checks
 * failed only as main already did (`Main is failing already:`), which is what it was told to do.
 */
export function isFalseClaim(handoff: {
  readonly status: HandoffStatus;
  readonly acceptance?: { readonly skipped: string | null; readonly passed: boolean; readonly results: readonly FailureOwnership[] } | null | undefined;
}): boolean {
  const verdict = handoff.acceptance ?? null;
  if (handoff.status !== 'done' || verdict === null || verdict.skipped !== null || verdict.passed) return false;
  const failed = verdict.results.filter((result) => !result.passed);
  const onlyMains = failed.length > 0 && failed.every((result) => (result.alreadyFailing?.length ?? 0) > 0 && (result.newFailures?.length ?? 0) === 0);
  return !onlyMains;
}

/**
 * The one message a worker sends up when its task ends. The summary and commits say what
 * happened; the lists are the rich part a planner learns from.
 */
export const handoffSchema = z.object({
  status: handoffStatusSchema,
  summary: z.string().min(1),
  commits: z.array(z.string()).default([]),
  evidence: z.string().default(''),
  notes: z.array(z.string()).default([]),
  concerns: z.array(z.string()).default([]),
  deviations: z.array(z.string()).default([]),
  findings: z.array(z.string()).default([]),
  feedback: z.array(z.string()).default([]),
  followUps: z.array(z.string()).default([]),
  /** True when the system wrote this handoff for an agent that ended without one. */
  synthetic: z.boolean().default(false),
  /**
   * colony's own verdict on the task's acceptance commands, added after the agent ended; absent
   * (or null) when the task had none. Agents never write it.
   */
  acceptance: acceptanceVerdictSchema.nullable().optional(),
});
export type Handoff = z.infer<typeof handoffSchema>;

/** A failure handoff colony writes for an agent that ended without one of its own. */
export function syntheticFailureHandoff(fields: {
  readonly summary: string;
  readonly commits?: readonly string[];
  readonly notes?: readonly string[];
  readonly concerns?: readonly string[];
}): Handoff {
  return {
    status: 'failed',
    summary: fields.summary,
    commits: [...(fields.commits ?? [])],
    evidence: '',
    notes: [...(fields.notes ?? [])],
    concerns: [...(fields.concerns ?? [])],
    deviations: [],
    findings: [],
    feedback: [],
    followUps: [],
    synthetic: true,
  };
}

/** A handoff's lists by the names a person reads them under, in the order they are shown. */
export function handoffLists(handoff: Handoff): [name: string, items: readonly string[]][] {
  return [
    ['notes', handoff.notes],
    ['concerns', handoff.concerns],
    ['deviations', handoff.deviations],
    ['findings', handoff.findings],
    ['feedback', handoff.feedback],
    ['follow-ups', handoff.followUps],
  ];
}
