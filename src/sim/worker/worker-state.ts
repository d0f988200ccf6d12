import { z } from 'zod';
import type { Scenario } from '../scenario/scenario.js';
import { indexLineFor } from '../scenario/module-render.js';
import type { IndexKnowledge, ModuleWrites, TestRun, WorkerFacts } from './worker-facts.js';

/**
 * The worker's state as its summary carries it: its facts (worker-facts.ts) with no file
 * content the sim can write again from its task. What it keeps of the text it read: the
 * index, when it is short (a longer one is carried as stale, so the worker reads it again
 * before changing it, as a model that no longer has the text would), and a conflicted file it
 * read and has not resolved yet. Of its test runs it keeps the failing test names it could
 * still quote, and the tail of the last run's output for evidence.
 */

/** The longest index or conflicted file a summary carries whole. */
export const KEPT_FILE_CHARACTERS = 2_000;
/** Failing test names kept per run: the first ones any answer or handoff quotes. */
const FAILING_NAMES_QUOTED = 8;
const OWN_FAILURES_QUOTED = 3;

const count = z.number().int().min(0);
const position = z.number().int().min(-1);

const factsSchema = z.object({
  next: count,
  listed: z.boolean(),
  index: z.union([z.tuple([z.enum(['unread', 'missing', 'stale'])]), z.tuple([z.literal('known'), z.string()])]),
  /** Places in the colony-spec of the modules whose index line the sim has seen. */
  indexLines: z.array(count),
  touched: z.array(z.string()),
  writes: z.array(z.tuple([z.string(), count])),
  /** place, first write, first correct, last correct, ever correct */
  modules: z.array(z.tuple([count, count, z.boolean(), z.boolean(), z.boolean()])),
  /** path, position, content (null when not kept), conflict markers, how to resolve them */
  reads: z.array(z.tuple([z.string(), count, z.string().nullable(), z.boolean(), z.enum(['union-of-lines', 'this-worker-side'])])),
  lastChange: position,
  /** position, passed, status line, failing names, pass count, tail */
  runs: z.array(z.tuple([count, z.boolean(), z.string(), z.array(z.string()), count.nullable(), z.string()])),
  /** The package installs that succeeded. */
  installed: z.array(z.string()),
  /** The package installs that could not reach the network; absent in states written before. */
  offline: z.array(z.string()).optional(),
  merges: z.array(z.tuple([count, z.enum(['merged', 'nothing', 'conflict', 'error']), z.array(z.string()), z.string()])),
  failures: z.array(z.tuple([z.string(), count, z.string()])),
  rejected: z.boolean(),
});

type FactsState = z.infer<typeof factsSchema>;

const workerCarriedSchema = z.object({
  role: z.literal('worker'),
  turn: count,
  abandoned: z.boolean(),
  budgetUsedUp: z.boolean(),
  reminders: z.object({ scratchpad: z.boolean(), reflection: z.boolean() }),
  /** Null when the task says nothing the sim can build: it has no facts. */
  facts: factsSchema.nullable(),
});

export type WorkerCarried = z.infer<typeof workerCarriedSchema>;

export function readWorkerCarried(carried: Readonly<Record<string, unknown>> | null): WorkerCarried | null {
  if (carried === null) return null;
  const parsed = workerCarriedSchema.safeParse(carried);
  return parsed.success ? parsed.data : null;
}

export function encodeFacts(facts: WorkerFacts, scenario: Scenario): FactsState {
  const place = new Map(scenario.modules.map((module, index) => [module.path, index]));
  const lastMerge = facts.merges.at(-1);
  const lastRun = facts.runs.at(-1);
  /** A read the next steps still need whole: of a file the last merge left in conflict, not written since. */
  const unresolved = (path: string, at: number): boolean =>
    lastMerge?.kind === 'conflict' && lastMerge.files.includes(path) && at > lastMerge.position && !((facts.lastWrites.get(path) ?? -1) > lastMerge.position);
  return {
    next: facts.nextPosition,
    listed: facts.listed,
    index: encodeIndex(facts.index),
    indexLines: scenario.modules.flatMap((module, index) =>
      facts.indexLinesSeen.has(indexLineFor(scenario.project.index, module.path)) ? [index] : [],
    ),
    touched: [...facts.touched],
    writes: [...facts.lastWrites],
    modules: [...facts.moduleWrites].flatMap(([path, writes]): FactsState['modules'] => {
      const index = place.get(path);
      return index === undefined ? [] : [[index, writes.firstPosition, writes.firstCorrect, writes.lastCorrect, writes.everCorrect]];
    }),
    reads: [...facts.lastReads].map(([path, read]) => {
      const kept = read.content !== null && read.content.length <= KEPT_FILE_CHARACTERS && unresolved(path, read.position);
      return [path, read.position, kept ? read.content : null, read.hasMarkers, read.strategy];
    }),
    lastChange: facts.lastChange,
    runs: facts.runs.map((run) => [
      run.position,
      run.passed,
      run.statusLine,
      quotedFailures(run.failing, scenario),
      run.passCount,
      run === lastRun ? run.tail : '',
    ]),
    installed: [...facts.installed],
    offline: [...facts.offline],
    merges: facts.merges.map((merge) => [merge.position, merge.kind, [...merge.files], merge.content]),
    failures: [...facts.stepFailures].map(([key, failure]) => [key, failure.count, failure.lastError]),
    rejected: facts.lastCallRejected,
  };
}

export function decodeFacts(state: FactsState, scenario: Scenario): WorkerFacts | null {
  const moduleWrites = new Map<string, ModuleWrites>();
  for (const [index, firstPosition, firstCorrect, lastCorrect, everCorrect] of state.modules) {
    const module = scenario.modules[index];
    if (module === undefined) return null;
    moduleWrites.set(module.path, { firstPosition, firstCorrect, lastCorrect, everCorrect });
  }
  const indexLinesSeen = new Set<string>();
  for (const index of state.indexLines) {
    const module = scenario.modules[index];
    if (module === undefined) return null;
    indexLinesSeen.add(indexLineFor(scenario.project.index, module.path));
  }
  const [stateName, content] = state.index;
  const index: IndexKnowledge = stateName === 'known' ? { state: 'known', content: content ?? '' } : { state: stateName };
  return {
    nextPosition: state.next,
    listed: state.listed,
    index,
    indexLinesSeen,
    touched: state.touched,
    lastWrites: new Map(state.writes),
    moduleWrites,
    lastReads: new Map(state.reads.map(([path, at, kept, hasMarkers, strategy]) => [path, { position: at, content: kept, hasMarkers, strategy }])),
    lastChange: state.lastChange,
    runs: state.runs.map(
      ([at, passed, statusLine, failing, passCount, tail]): TestRun => ({ position: at, passed, statusLine, failing, passCount, tail }),
    ),
    installed: new Set(state.installed),
    offline: new Set(state.offline ?? []),
    merges: state.merges.map(([at, kind, files, mergeContent]) => ({ position: at, kind, files, content: mergeContent })),
    stepFailures: new Map(state.failures.map(([key, failureCount, lastError]) => [key, { count: failureCount, lastError }])),
    lastCallRejected: state.rejected,
    lastSearch: null,
  };
}

function encodeIndex(index: IndexKnowledge): FactsState['index'] {
  if (index.state !== 'known') return [index.state];
  return index.content.length <= KEPT_FILE_CHARACTERS ? ['known', index.content] : ['stale'];
}

/**
 * The failing names any answer or handoff can still quote, in their order: the first few, the
 * first few that are not test files, and the first few of each of the task's functions.
 */
function quotedFailures(failing: readonly string[], scenario: Scenario): string[] {
  const prefixes = scenario.modules.flatMap((module) => module.exports.map((fn) => `${fn.name}(`));
  const seen = new Map<string, number>();
  let notFiles = 0;
  return failing.filter((name, index) => {
    const own = prefixes.filter((prefix) => name.startsWith(prefix));
    const ownKept = own.some((prefix) => (seen.get(prefix) ?? 0) < OWN_FAILURES_QUOTED);
    for (const prefix of own) seen.set(prefix, (seen.get(prefix) ?? 0) + 1);
    const notFile = !/\.test\.[cm]?js$/.test(name);
    const notFileKept = notFile && notFiles < 3;
    if (notFile) notFiles += 1;
    return index < FAILING_NAMES_QUOTED || notFileKept || ownKept;
  });
}
