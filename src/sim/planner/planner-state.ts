import { z } from 'zod';
import type { HandoffMessage } from '../reading/handoff-message.js';
import type { ModuleRecord, PlannerLedger, PublishedTask } from './types.js';
import { HANDOFF_CONCERNS_QUOTED, HANDOFF_NOTES_QUOTED } from './types.js';
import type { Scenario } from '../scenario/scenario.js';

/**
 * The planner's state as its summary carries it: everything it derived from the turns the
 * summary replaced, small enough for hundreds of tasks. Modules are named by their place in
 * the brief's colony-spec (the brief is never compacted away), so a task costs a few dozen
 * characters: `["task-ab12cd34","w",[17],"done"]` is id, kind (worker or planner), modules
 * and handoff. A module whose record follows from its one task (open while the task is, landed
 * when it ended done) is not written at all; any other is written in full. Failures colony's
 * green check reported for a module whose task is still open are written apart (`pending`), as
 * is the last finish colony refused, so no fix-up message or refusal is counted twice or lost.
 */

const STATUSES = ['done', 'partial', 'blocked', 'failed'] as const;
const PHASES = ['unpublished', 'open', 'landed', 'not-landed', 'failing'] as const;
const count = z.number().int().min(0);

/** `"done"`, or status, synthetic, and the notes and concerns a retry's brief quotes. */
const handoffSchema = z.union([z.literal('done'), z.tuple([z.enum(STATUSES), z.boolean(), z.array(z.string()), z.array(z.string())])]);
/** id, kind, module places, handoff; then the title when it is not `Build <its one module>`. */
const taskSchema = z.tuple([z.string(), z.enum(['w', 'p']), z.array(count), handoffSchema.nullable()], z.string());
/** module place, phase, attempts, latest task (its place among the tasks, -1 for none), refused publishes, failing tests, last problem. */
const moduleSchema = z.tuple([count, z.enum(PHASES), count, z.number().int().min(-1), count, z.array(z.string()), z.string().nullable()]);
const testRunSchema = z.object({
  position: count,
  statusLine: z.string(),
  passCount: count.nullable(),
  passed: z.boolean(),
  failingCount: count,
  unmapped: z.array(z.string()),
});

const releaseRefusalSchema = z.object({ position: count, failures: z.array(z.string()), unmapped: z.array(z.string()) });

const ledgerStateSchema = z.object({
  tasks: z.array(taskSchema),
  modules: z.array(moduleSchema),
  lastHandoff: z.number().int().min(-1),
  lastTestRun: testRunSchema.nullable(),
  testRunErrors: z.array(z.string()),
  /** module place and the failures colony's green check reported while its task was open; only modules that have any. */
  pending: z.array(z.tuple([count, z.array(z.string())])).default([]),
  /** The last refused finish (green-protocol.ts). */
  releaseRefusal: releaseRefusalSchema.nullable().default(null),
});

export type LedgerState = z.infer<typeof ledgerStateSchema>;

const phaseSchema = z.enum(['before-spec', 'spec', 'modules', 'done']);
/** What a summary carries of a goal read in parts (paged-goal.ts): where the reading stands, the project, the module list as path, line, function names. */
export const pagedStateSchema = z.object({
  cursor: z.object({ line: z.number().int().min(1), phase: phaseSchema }),
  project: z.object({ test: z.string(), index: z.string() }).nullable(),
  modules: z.array(z.tuple([z.string(), z.number().int().min(1), z.array(z.string())])),
  readErrors: z.number().int().min(0),
});
export type PagedState = z.infer<typeof pagedStateSchema>;

const plannerCarriedSchema = z.object({
  role: z.literal('planner'),
  /** Answers so far: turns go on counting from here. */
  turn: count,
  /** Events read so far: positions go on from here. */
  events: count,
  /** Messages from the user that came after the last answer, still to acknowledge. */
  unanswered: z.array(z.string()),
  /** The failure lines of fix-up messages that came after the last answer, still to acknowledge. */
  unansweredGreen: z.array(z.array(z.string())).default([]),
  budgetUsedUp: z.boolean(),
  /** The most publishing calls an answer holds since one was cut off at the output limit; null when none was. */
  publishCap: z.number().int().min(1).nullable().default(null),
  reminders: z.object({ scratchpad: z.boolean(), reflection: z.boolean() }),
  ledger: ledgerStateSchema,
  /** Only for a goal too large for the first message, read in parts. */
  paged: pagedStateSchema.optional(),
});

export type PlannerCarried = z.infer<typeof plannerCarriedSchema>;

/** The planner state in a summary's `sim-state` block; null when it holds none (or a worker's). */
export function readPlannerCarried(carried: Readonly<Record<string, unknown>> | null): PlannerCarried | null {
  if (carried === null) return null;
  const parsed = plannerCarriedSchema.safeParse(carried);
  return parsed.success ? parsed.data : null;
}

export function encodeLedger(ledger: PlannerLedger, scenario: Scenario | null): LedgerState {
  const place = new Map((scenario?.modules ?? []).map((module, index) => [module.path, index]));
  const taskPlace = new Map(ledger.tasks.map((task, index) => [task.id, index]));
  const tasks = ledger.tasks.map((task): LedgerState['tasks'][number] => {
    const modules = task.modulePaths.flatMap((path) => place.get(path) ?? []);
    const encoded: LedgerState['tasks'][number] = [task.id, task.kind === 'worker' ? 'w' : 'p', modules, encodeHandoff(task)];
    return task.title === defaultTitle(task.kind, task.modulePaths) ? encoded : [...encoded, task.title];
  });
  const carriers = carriersByPath(ledger.tasks);
  const modules = ledger.modules.flatMap((record, index): LedgerState['modules'] => {
    const derived = derivedRecord(record.module, carriers.get(record.module.path) ?? []);
    if (derived !== null && sameRecord(derived, record)) return [];
    const latest = record.latestTask === null ? -1 : (taskPlace.get(record.latestTask.id) ?? -1);
    return [[index, record.phase, record.attempts, latest, record.publishErrors, record.failingTests, record.problems.at(-1) ?? null]];
  });
  const pending = ledger.modules.flatMap((record, index): LedgerState['pending'] =>
    record.pendingFailures.length === 0 ? [] : [[index, [...record.pendingFailures]]],
  );
  const run = ledger.lastTestRun;
  const lastTestRun = run === null ? null : { ...run, unmapped: [...run.unmapped] };
  const refusal = ledger.releaseRefusal;
  const releaseRefusal = refusal === null ? null : { position: refusal.position, failures: [...refusal.failures], unmapped: [...refusal.unmapped] };
  return { tasks, modules, lastHandoff: ledger.lastHandoffPosition, lastTestRun, testRunErrors: [...ledger.testRunErrors], pending, releaseRefusal };
}

/** The ledger a summary carried, bound to the brief's modules; null when it does not fit them. */
export function decodeLedger(state: LedgerState, scenario: Scenario): PlannerLedger | null {
  const tasks: PublishedTask[] = [];
  for (const [id, kind, places, handoff, title] of state.tasks) {
    const modulePaths = places.map((index) => scenario.modules[index]?.path);
    if (modulePaths.some((path) => path === undefined)) return null;
    const paths = modulePaths.filter((path): path is string => path !== undefined);
    const taskKind = kind === 'w' ? 'worker' : 'planner';
    const taskTitle = title ?? defaultTitle(taskKind, paths) ?? '';
    tasks.push({ id, kind: taskKind, title: taskTitle, modulePaths: paths, handoff: decodeHandoff(id, taskTitle, handoff) });
  }
  const carriers = carriersByPath(tasks);
  const modules: ModuleRecord[] = scenario.modules.map(
    (module) =>
      derivedRecord(module, carriers.get(module.path) ?? []) ??
      { module, phase: 'unpublished', attempts: 0, latestTask: null, problems: [], failingTests: [], pendingFailures: [], publishErrors: 0 },
  );
  for (const [index, phase, attempts, latest, publishErrors, failingTests, problem] of state.modules) {
    const module = scenario.modules[index];
    if (module === undefined || latest >= tasks.length) return null;
    const latestTask = latest === -1 ? null : (tasks[latest] ?? null);
    modules[index] = { module, phase, attempts, latestTask, problems: problem === null ? [] : [problem], failingTests, pendingFailures: [], publishErrors };
  }
  for (const [index, failures] of state.pending) {
    const record = modules[index];
    if (record === undefined) return null;
    record.pendingFailures = [...failures];
  }
  return {
    modules,
    tasks,
    lastHandoffPosition: state.lastHandoff,
    lastTestRun: state.lastTestRun,
    testRunErrors: state.testRunErrors,
    releaseRefusal: state.releaseRefusal,
  };
}

function defaultTitle(kind: PublishedTask['kind'], paths: readonly string[]): string | null {
  return kind === 'worker' && paths.length === 1 ? `Build ${paths[0] ?? ''}` : null;
}

function encodeHandoff(task: PublishedTask): LedgerState['tasks'][number][3] {
  const { handoff } = task;
  if (handoff === null) return null;
  const checksFailed = handoff.acceptance?.verdict === 'failed';
  if (handoff.status === 'done' && !handoff.synthetic && !checksFailed) return 'done';
  // Only a worker's handoff that did not land is ever quoted again, in its retry's brief.
  const quoted = task.kind === 'worker' && (handoff.status !== 'done' || checksFailed);
  return [
    handoff.status,
    handoff.synthetic,
    quoted ? handoff.notes.slice(0, HANDOFF_NOTES_QUOTED) : [],
    quoted ? handoff.concerns.slice(0, HANDOFF_CONCERNS_QUOTED) : [],
  ];
}

function decodeHandoff(taskId: string, title: string, handoff: LedgerState['tasks'][number][3]): HandoffMessage | null {
  if (handoff === null) return null;
  // The module records carry what a verdict on acceptance checks decided; the verdict itself is not kept.
  if (handoff === 'done') return { taskId, title, status: 'done', synthetic: false, summary: '', notes: [], concerns: [], acceptance: null };
  const [status, synthetic, notes, concerns] = handoff;
  return { taskId, title, status, synthetic, summary: '', notes, concerns, acceptance: null };
}

function carriersByPath(tasks: readonly PublishedTask[]): Map<string, PublishedTask[]> {
  const carriers = new Map<string, PublishedTask[]>();
  for (const task of tasks) {
    for (const path of task.modulePaths) carriers.set(path, [...(carriers.get(path) ?? []), task]);
  }
  return carriers;
}

/**
 * The record a module has when its one task says all there is to say; null when it needs writing
 * out. Pending failures are carried apart (`pending`), so they do not count here.
 */
function derivedRecord(module: ModuleRecord['module'], carrying: readonly PublishedTask[]): ModuleRecord | null {
  if (carrying.length === 0) {
    return { module, phase: 'unpublished', attempts: 0, latestTask: null, problems: [], failingTests: [], pendingFailures: [], publishErrors: 0 };
  }
  const [task] = carrying;
  if (carrying.length > 1 || task === undefined) return null;
  if (task.handoff !== null && task.handoff.status !== 'done') return null;
  const phase = task.handoff === null ? 'open' : 'landed';
  return { module, phase, attempts: 1, latestTask: task, problems: [], failingTests: [], pendingFailures: [], publishErrors: 0 };
}

function sameRecord(first: ModuleRecord, second: ModuleRecord): boolean {
  return (
    first.phase === second.phase &&
    first.attempts === second.attempts &&
    first.latestTask?.id === second.latestTask?.id &&
    first.publishErrors === second.publishErrors &&
    first.problems.at(-1) === second.problems.at(-1) &&
    JSON.stringify(first.failingTests) === JSON.stringify(second.failingTests)
  );
}
