import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { handoffSchema, handoffStatusSchema } from '../events/handoff.js';
import type { Handoff } from '../events/handoff.js';
import { readRecordedInput, type Tool, type ToolResult } from './tool.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

const description = readFileSync(new URL('./descriptions/submit-handoff.md', import.meta.url), 'utf8');

const optionalList = (what: string) => z.array(z.string()).optional().describe(what);

export const submitHandoffParameters = z.object({
  status: handoffStatusSchema.describe(
    'done: the task is complete and merged. partial: some of it is merged, the rest is not. blocked: you could not proceed without something outside your control. failed: you could not do it.',
  ),
  summary: z.string().min(1).describe('What you did and where things stand, in a few sentences.'),
  evidence: z
    .string()
    .optional()
    .describe('The checks you ran to show the work is right (commands and the relevant part of their output).'),
  notes: optionalList('Anything the planner should know that fits no other list.'),
  concerns: optionalList('Risks or doubts about the work or the code around it.'),
  deviations: optionalList('Where and why you did something other than what the task asked.'),
  findings: optionalList('Things you learned about the codebase that others would want to know.'),
  feedback: optionalList('Feedback on the task itself: unclear parts, wrong assumptions, missing information.'),
  follow_ups: optionalList('Concrete tasks you suggest doing next.'),
});
export type SubmitHandoffInput = z.infer<typeof submitHandoffParameters>;

export interface SubmitHandoffOptions {
  /**
   * Told, as the call's error, to a worker whose first handoff claims `done` with no evidence:
   * it is asked to show the checks it ran before the claim is taken. A second claim without
   * evidence is taken, with a concern saying so. Absent: every handoff is taken as it comes.
   */
  readonly evidenceFirst?: string;
  /** The worker was asked for evidence before a restart: it is not asked again. */
  readonly askedBefore?: boolean;
  /**
   * Why a `done` handoff may not have landed (what the worker's workspace holds that is not on
   * main, as the call's error), or null when it holds nothing: a first such `done` is refused
   * with it; a second is taken, with a concern saying so. Absent: not checked.
   */
  readonly unlanded?: () => Promise<string | null>;
}

/**
 * `submit_handoff`: the worker's last call. Builds the Handoff (with `commits: []`; the caller
 * fills in the commits it knows about), passes it to `onSubmit`, and ends the agent's loop.
 */
export function createSubmitHandoffTool(onSubmit: (handoff: Handoff) => void, options: SubmitHandoffOptions = {}): Tool<SubmitHandoffInput> {
  let askedForEvidence = options.askedBefore === true;
  let askedToLand = false;
  return {
    name: TOOL_NAMES.submitHandoff,
    description,
    parameters: submitHandoffParameters,
    execute: async (input: SubmitHandoffInput): Promise<ToolResult> => {
      let handoff = handoffOf(input);
      const unproven = handoff.status === 'done' && handoff.evidence.trim() === '';
      if (unproven && options.evidenceFirst !== undefined) {
        if (!askedForEvidence) {
          askedForEvidence = true;
          return { ok: false, error: options.evidenceFirst };
        }
        handoff = { ...handoff, concerns: [...handoff.concerns, 'The worker claimed done without evidence, even when asked for it.'] };
      }
      const unlanded = handoff.status === 'done' && options.unlanded !== undefined ? await options.unlanded() : null;
      if (unlanded !== null) {
        if (!askedToLand) {
          askedToLand = true;
          return { ok: false, error: unlanded };
        }
        handoff = { ...handoff, concerns: [...handoff.concerns, 'The worker claimed done while its workspace still held work that was not on main, even when told.'] };
      }
      onSubmit(handoff);
      return { ok: true, output: 'handoff submitted', endsAgent: true };
    },
  };
}

function handoffOf(input: SubmitHandoffInput): Handoff {
  return handoffSchema.parse({
    status: input.status,
    summary: input.summary,
    commits: [],
    evidence: input.evidence ?? '',
    notes: input.notes ?? [],
    concerns: input.concerns ?? [],
    deviations: input.deviations ?? [],
    findings: input.findings ?? [],
    feedback: input.feedback ?? [],
    followUps: input.follow_ups ?? [],
    synthetic: false,
  });
}

/**
 * The handoff a recorded `submit_handoff` call made, rebuilt from the call's raw arguments (for
 * a worker taken up again after a restart); null when they do not parse, which a call that
 * succeeded never had.
 */
export function handoffFromSubmitInput(input: string): Handoff | null {
  const read = readRecordedInput(submitHandoffParameters, input);
  return read === null ? null : handoffOf(read);
}
