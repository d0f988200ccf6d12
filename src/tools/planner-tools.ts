import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { handoffStatusSchema, type HandoffStatus } from '../events/handoff.js';
import { overlapText } from './task-overlap-text.js';
import { readRecordedInput, type AnyTool, type Tool, type ToolResult } from './tool.js';
import { createWriteScratchpadTool } from './write-scratchpad-tool.js';
import type { TaskOverlap } from './task-overlap-text.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

function description(name: string): string {
  return readFileSync(new URL(`./descriptions/${name}.md`, import.meta.url), 'utf8');
}

export interface FinishReport {
  readonly status: HandoffStatus;
  readonly summary: string;
  /** How the planner checked its scope (the command run on main and what it showed); empty when it gave none. */
  readonly evidence: string;
  readonly notes: readonly string[];
  readonly concerns: readonly string[];
  /** Where and why the scope was done otherwise than its brief asked. */
  readonly deviations: readonly string[];
  readonly findings: readonly string[];
  readonly feedback: readonly string[];
  readonly followUps: readonly string[];
}

export type Published =
  | {
      readonly ok: true;
      readonly taskId: string;
      /** Tasks in flight the new one may conflict with; it was published all the same. */
      readonly overlaps: readonly TaskOverlap[];
    }
  | { readonly ok: false; readonly error: string };

/**
 * What a planner's role tools act on: the store, seen from one planner. The planner never
 * learns who takes its tasks; it only gets their ids back.
 */
export interface PlannerBoard {
  /**
   * `paths`: the files or folders the task expects to change, as the planner gave them; may be
   * empty. `acceptance`: commands that must pass on main once the task's work landed; none when
   * empty or absent.
   */
  createTask(input: { title: string; brief: string; retryOf: string | null; paths: readonly string[]; acceptance?: readonly string[] }): Promise<Published>;
  delegate(input: { title: string; scope: string; brief: string }): Promise<Published>;
  writeScratchpad(content: string): void;
  setAndon(paused: boolean, reason: string): Promise<void>;
  /**
   * Records the planner's finish, or refuses it with what to do instead: colony refuses a root
   * planner's done while main's release check fails.
   */
  finish(report: FinishReport, signal?: AbortSignal): Promise<FinishResult> | FinishResult;
}

export type FinishResult = { readonly ok: true } | { readonly ok: false; readonly error: string };

/** More than this many paths is a folder's worth: declare the folder. */
const MAX_DECLARED_PATHS = 50;
/** Acceptance checks are a few decisive commands, each run on main after the worker ends. */
export const MAX_ACCEPTANCE_COMMANDS = 5;
/** A command longer than this is a script: put it in the repository and run that. */
export const MAX_ACCEPTANCE_COMMAND_LENGTH = 1_000;

const createTaskParameters = z.object({
  title: z.string().trim().min(1).max(200).describe('A short name for the task.'),
  brief: z.string().trim().min(1).describe('Everything the worker needs to know, in Markdown.'),
  retry_of: z.string().min(1).optional().describe('The id of an earlier task this one retries.'),
  paths: z
    .array(z.string().trim().min(1))
    .max(MAX_DECLARED_PATHS)
    .optional()
    .describe('The files or folders (ending in /) the task expects to change, relative to the repository root.'),
  acceptance: z
    .array(z.string().trim().min(1).max(MAX_ACCEPTANCE_COMMAND_LENGTH))
    .min(1)
    .max(MAX_ACCEPTANCE_COMMANDS)
    .optional()
    .describe("Shell commands that must pass on main once the task's work has landed, run from the repository root (e.g. the project's test command)."),
});

const delegateParameters = z.object({
  title: z.string().trim().min(1).max(200).describe('A short name for the slice.'),
  scope: z.string().trim().min(1).describe('The path prefix the sub-planner owns, inside your own scope.'),
  brief: z.string().trim().min(1).describe('What the slice must achieve, in Markdown.'),
});

const andonParameters = z.object({
  paused: z.boolean().describe('true pauses new starts below you, false resumes them.'),
  reason: z.string().trim().min(1).describe('Why, in a sentence.'),
});

const optionalList = (what: string) => z.array(z.string()).optional().describe(what);

const finishParameters = z.object({
  summary: z.string().trim().min(1).describe('What was achieved in your scope.'),
  status: handoffStatusSchema.describe('done, partial, blocked or failed: say which, there is no default.'),
  evidence: z.string().optional().describe('How you checked it: the command you ran on main and the tail of its output.'),
  notes: optionalList('Anything else worth knowing.'),
  concerns: optionalList('Risks or doubts.'),
  deviations: optionalList('Where and why your scope was done otherwise than the brief asked.'),
  findings: optionalList('Things learned about the codebase.'),
  feedback: optionalList('Feedback on the goal or the brief.'),
  follow_ups: optionalList('Work that should follow.'),
});

function publishedResult(published: Published, firstLine: (taskId: string) => string): ToolResult {
  if (!published.ok) return { ok: false, error: published.error };
  const lines = [firstLine(published.taskId), 'Its handoff will arrive as a message in this conversation when it ends.'];
  if (published.overlaps.length > 0) lines.push(overlapText(published.overlaps));
  return { ok: true, output: lines.join('\n') };
}

/** The planner's role tools, bound to its board: create_task, delegate, write_scratchpad, andon, finish. */
export function createPlannerRoleTools(board: PlannerBoard): AnyTool[] {
  const createTask: Tool<z.infer<typeof createTaskParameters>> = {
    name: TOOL_NAMES.createTask,
    description: description('create-task'),
    parameters: createTaskParameters,
    execute: async (input) =>
      publishedResult(
        await board.createTask({
          title: input.title,
          brief: input.brief,
          retryOf: input.retry_of ?? null,
          paths: input.paths ?? [],
          acceptance: input.acceptance ?? [],
        }),
        (id) => `Created task ${id}: ${input.title}`,
      ),
  };
  const delegate: Tool<z.infer<typeof delegateParameters>> = {
    name: TOOL_NAMES.delegate,
    description: description('delegate'),
    parameters: delegateParameters,
    execute: async (input) =>
      publishedResult(await board.delegate(input), (id) => `Delegated task ${id} (scope ${input.scope}): ${input.title}`),
  };
  const writeScratchpad = createWriteScratchpadTool((content) => board.writeScratchpad(content));
  const andon: Tool<z.infer<typeof andonParameters>> = {
    name: TOOL_NAMES.andon,
    description: description('andon'),
    parameters: andonParameters,
    execute: async (input) => {
      await board.setAndon(input.paused, input.reason);
      const what = input.paused ? 'paused' : 'resumed';
      return { ok: true, output: `New tasks below this planner are ${what}.` };
    },
  };
  const finish: Tool<z.infer<typeof finishParameters>> = {
    name: TOOL_NAMES.finish,
    description: description('finish'),
    parameters: finishParameters,
    execute: async (input, context) => {
      const finished = await board.finish(finishReportOf(input), context.signal);
      if (!finished.ok) return { ok: false, error: finished.error };
      return {
        ok: true,
        output: `Finished: ${input.status}. If a handoff is still due or arrives later, it is delivered to you and you continue.`,
        endsAgent: true,
      };
    },
  };
  return [createTask, delegate, writeScratchpad, andon, finish];
}

/** What a recorded `finish` call may hold: calls made before its status was required took `done` when they left it out. */
const recordedFinishParameters = finishParameters.extend({ status: handoffStatusSchema.optional() });

function finishReportOf(input: z.infer<typeof recordedFinishParameters>): FinishReport {
  return {
    status: input.status ?? 'done',
    summary: input.summary,
    evidence: input.evidence ?? '',
    notes: input.notes ?? [],
    concerns: input.concerns ?? [],
    deviations: input.deviations ?? [],
    findings: input.findings ?? [],
    feedback: input.feedback ?? [],
    followUps: input.follow_ups ?? [],
  };
}

/**
 * The report a recorded `finish` call made, rebuilt from the call's raw arguments (for a planner
 * taken up again after a restart); null when they do not parse, which a call that succeeded never had.
 */
export function finishReportFromInput(input: string): FinishReport | null {
  const read = readRecordedInput(recordedFinishParameters, input);
  return read === null ? null : finishReportOf(read);
}
