import { z } from 'zod';

/** How a task ended, as told by the agent that owned it (or by the system for a dead one). */
export const handoffStatusSchema = z.enum(['done', 'partial', 'blocked', 'failed']);
export type HandoffStatus = z.infer<typeof handoffStatusSchema>;

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
