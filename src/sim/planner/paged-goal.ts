import { z } from 'zod';
import type { SpecModule } from '../../spec/colony-spec.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';
import { isShrunkOutput } from '../reading/compaction-protocol.js';
import { readLargeBriefNotice, type LargeBriefNotice } from '../reading/large-brief.js';
import type { Scenario } from '../scenario/scenario.js';
import type { SimOptions } from '../sim-options.js';
import { GOAL_START, scanPage, type GoalCursor } from './goal-pages.js';
import { GOAL_NOTES_OPENING, type PlannerConversation } from './planner-conversation.js';
import type { PagedState } from './planner-state.js';

/**
 * The goal of a planner whose brief came as an opening and a file (`reading/large-brief.ts`),
 * as far as its read_file calls have read it. It pages through the file first, a page an
 * answer, collecting the module list (each module's path, the line it starts on and its
 * function names), and plans only once the list is whole. A module's spec is at hand while a
 * page holding it is in the conversation, whole (not shrunk by colony); the planner publishes
 * only modules at hand, and reads a module's lines again when it needs them and they are not.
 */

/** The sim's own window when its spec sets none: the window colony gives `sim`. */
const DEFAULT_WINDOW_TOKENS = 200_000;
/** A page is at most this share of the window, so pages and the briefs copied from them leave room. */
const PAGE_SHARE = 1 / 8;
const MIN_PAGE_LINES = 10;
/** read_file returns at most this many lines a call. */
const MAX_PAGE_LINES = 2_000;
/** Failed reads in a row before the planner gives up on the file. */
export const MAX_READ_ERRORS = 3;

const TRUNCATED = /^\[\.\.\. truncated: showing lines (\d+)-(\d+) of (\d+)/m;
const readInputSchema = z.object({ path: z.string(), offset: z.number().int().min(1).optional(), limit: z.number().int().min(1).optional() });


export interface PagedGoal {
  readonly notice: LargeBriefNotice;
  readonly cursor: GoalCursor;
  readonly project: Scenario['project'] | null;
  /** Every module listed so far, in the file's order: the spec when at hand, else its path and function names only. */
  readonly modules: readonly SpecModule[];
  readonly lineOf: ReadonlyMap<string, number>;
  readonly atHand: ReadonlySet<string>;
  readonly readErrors: number;
  /** How many lines the planner reads at once. */
  readonly pageLines: number;
  /** How much it writes in one answer's briefs, in characters: as much as a page holds. */
  readonly pageCharacters: number;
  /** The notes of the last page read in order, when no answer has written them yet. */
  readonly unnoted: GoalNotes | null;
}

/** The goal read in parts when the brief came as an opening and a file; null when it came whole. */
export function pagedGoalOf(conversation: PlannerConversation, options: SimOptions): PagedGoal | null {
  const notice = readLargeBriefNotice(conversation.brief);
  return notice === null ? null : readPagedGoal(conversation, notice, conversation.carried?.paged ?? null, options);
}

/** The paged goal, from the state a summary carried and the reads since. */
export function readPagedGoal(conversation: PlannerConversation, notice: LargeBriefNotice, carried: PagedState | null, options: SimOptions): PagedGoal {
  let cursor: GoalCursor = carried?.cursor ?? GOAL_START;
  let project: Scenario['project'] | null = carried?.project ?? null;
  let readErrors = carried?.readErrors ?? 0;
  const listed = new Map<string, { line: number; names: readonly string[] }>((carried?.modules ?? []).map(([path, line, names]) => [path, { line, names }]));
  const specs = new Map<string, SpecModule>();
  let unnoted: GoalNotes | null = null;
  const apply = (notes: GoalNotes): void => {
    for (const [path, line, names] of notes.modules) if (!listed.has(path)) listed.set(path, { line, names });
    project = notes.project ?? project;
    cursor = notes.next;
  };
  for (const event of conversation.events) {
    if (event.kind === 'goal-notes') {
      const notes = readNotes(event.text);
      // A page read whole was folded already; its notes count when colony has since shrunk it.
      if (notes !== null && notes.from === cursor.line && cursor.phase !== 'done') apply(notes);
      unnoted = null;
      continue;
    }
    if (event.kind !== 'action' || event.action.raw.name !== TOOL_NAMES.readFile || event.action.result === null) continue;
    const input = readInputOf(event.action.raw.input);
    if (input === null || input.path.replace(/^\.\//, '') !== notice.path) continue;
    const { content, isError } = event.action.result;
    if (isError) {
      readErrors += 1;
      continue;
    }
    if (isShrunkOutput(content)) continue;
    const offset = input.offset ?? 1;
    const truncated = TRUNCATED.exec(content);
    const lastLine = truncated === null ? Math.min(offset + (input.limit ?? MAX_PAGE_LINES) - 1, notice.lines) : Number(truncated[2]);
    const text = truncated === null ? content : content.slice(0, truncated.index);
    const inOrder = offset === cursor.line && cursor.phase !== 'done';
    const page = scanPage(text, inOrder ? cursor : { line: offset, phase: 'modules' }, lastLine);
    for (const { line, module } of page.modules) {
      specs.set(module.path, module);
      if (!listed.has(module.path)) listed.set(module.path, { line, names: module.exports.map((fn) => fn.name) });
    }
    if (!inOrder) continue;
    readErrors = 0;
    const notes: GoalNotes = {
      from: offset,
      next: page.next,
      project: page.project,
      modules: page.modules.map(({ line, module }) => [module.path, line, module.exports.map((fn) => fn.name)]),
    };
    apply(notes);
    unnoted = notes;
  }
  const modules = [...listed.entries()].map(([path, { names }]): SpecModule => specs.get(path) ?? { path, exports: names.map((name) => ({ name, cases: [] })) });
  return {
    notice,
    cursor,
    project,
    modules,
    lineOf: new Map([...listed.entries()].map(([path, { line }]) => [path, line])),
    atHand: new Set(specs.keys()),
    readErrors,
    pageLines: pageLinesOf(notice, options),
    pageCharacters: pageCharactersOf(options),
    unnoted,
  };
}

/** What the planner notes of a page it read in order, so the module list outlives the page's text. */
export interface GoalNotes {
  readonly from: number;
  readonly next: GoalCursor;
  readonly project: Scenario['project'] | null;
  readonly modules: readonly (readonly [string, number, readonly string[]])[];
}

const notesSchema = z.object({
  from: z.number().int().min(1),
  next: z.object({ line: z.number().int().min(1), phase: z.enum(['before-spec', 'spec', 'modules', 'done']) }),
  project: z.object({ test: z.string(), index: z.string() }).nullable(),
  modules: z.array(z.tuple([z.string(), z.number().int().min(1), z.array(z.string())])),
});

/** The line an answer carries for notes not yet taken: `Goal notes: {...}`. */
export function goalNotesLine(notes: GoalNotes): string {
  return `${GOAL_NOTES_OPENING}${JSON.stringify(notes)}`;
}

function readNotes(text: string): GoalNotes | null {
  try {
    const parsed = notesSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The state a summary carries of the paged goal. */
export function encodePagedGoal(goal: PagedGoal): PagedState {
  return {
    cursor: goal.cursor,
    project: goal.project,
    modules: goal.modules.map((module) => [module.path, goal.lineOf.get(module.path) ?? 1, module.exports.map((fn) => fn.name)]),
    readErrors: goal.readErrors,
  };
}

/** The read_file call for the page from `line`. */
export function pageRead(goal: PagedGoal, line: number): { name: typeof TOOL_NAMES.readFile; input: { path: string; offset: number; limit: number } } {
  return { name: TOOL_NAMES.readFile, input: { path: goal.notice.path, offset: line, limit: goal.pageLines } };
}

/** Characters a page holds: an eighth of the window, at four characters a token. */
function pageCharactersOf(options: SimOptions): number {
  return Math.floor((options.context ?? DEFAULT_WINDOW_TOKENS) * PAGE_SHARE * 4);
}

/** Lines a page holds: a page's characters, in the file's average line length. */
function pageLinesOf(notice: LargeBriefNotice, options: SimOptions): number {
  const averageLine = Math.max(1, notice.characters / Math.max(1, notice.lines));
  const lines = Math.floor(pageCharactersOf(options) / averageLine);
  return Math.min(MAX_PAGE_LINES, Math.max(MIN_PAGE_LINES, lines));
}

/**
 * The publishing calls of one answer for a goal read in parts: as many as fit a page's worth
 * of briefs (at least one), so an answer never outgrows a window the goal itself outgrew.
 */
export function withinPage<Call extends { readonly input: object }>(calls: readonly Call[], goal: PagedGoal, most: number): Call[] {
  const taken: Call[] = [];
  let size = 0;
  for (const call of calls.slice(0, most)) {
    size += JSON.stringify(call.input).length;
    if (taken.length > 0 && size > goal.pageCharacters) break;
    taken.push(call);
  }
  return taken;
}

/** The goal as a scenario to plan from, once the module list is whole. */
export function pagedScenario(goal: PagedGoal): { readonly ok: true; readonly scenario: Scenario } | { readonly ok: false; readonly error: string } {
  if (goal.project === null || goal.modules.length === 0) {
    return { ok: false, error: `I read ${goal.notice.path} to its end and found no colony-spec block with a "project" and "modules" laid out one module a line.` };
  }
  return { ok: true, scenario: { project: goal.project, modules: [...goal.modules] } };
}

/** The module paths a brief's colony-spec names. */
export function briefModulePaths(brief: string): string[] {
  return [...brief.matchAll(/"path":"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1] ?? '');
}

function readInputOf(input: string): z.infer<typeof readInputSchema> | null {
  try {
    const parsed = readInputSchema.safeParse(JSON.parse(input));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
