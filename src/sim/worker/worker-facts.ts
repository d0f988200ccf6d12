import { commandPassed, failingTestNames, passCount, readCommandReport, tailOf } from '../reading/command-output.js';
import { isShrunkOutput, unshrunkEnd } from '../reading/compaction-protocol.js';
import type { ResolutionStrategy } from './merge-conflict-resolution.js';
import { hasConflictMarkers, strategyFor } from './merge-conflict-resolution.js';
import type { Scenario } from '../scenario/scenario.js';
import { declareCommandFor, indexLineFor, installCommandFor, lacksNetwork, renderModuleSource } from '../scenario/module-render.js';
import type { WorkerCall } from './worker-tool-calls.js';
import { restoredPathOf } from './worker-habits.js';
import { stepKeyOf } from './worker-tool-calls.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';

/**
 * Facts the sim worker derives from its own calls and their results, folded one action at a
 * time: only successful results count as progress, so a failed or malformed call is simply
 * made again. They are all the worker decides from, and what its summary carries when its
 * conversation is compacted (worker-state.ts), so no file content needs to be carried that
 * the sim can write again from the task.
 */

/** What the sim knows of the index file's content on disk. */
export type IndexKnowledge =
  | { readonly state: 'unread' }
  | { readonly state: 'missing' }
  | { readonly state: 'stale' }
  | { readonly state: 'known'; readonly content: string };

export interface TestRun {
  readonly position: number;
  readonly passed: boolean;
  readonly statusLine: string;
  /** The failing test names, in the order the output gave them. */
  readonly failing: readonly string[];
  readonly passCount: number | null;
  /** The last lines of the output, for evidence. */
  readonly tail: string;
}

export type MergeKind = 'merged' | 'nothing' | 'conflict' | 'error';

export interface MergeAttempt {
  readonly position: number;
  readonly kind: MergeKind;
  /** The conflicted files, for a conflict. */
  readonly files: readonly string[];
  readonly content: string;
}

/** A module's successful writes: the first and whether any, and the last, was the correct code. */
export interface ModuleWrites {
  readonly firstPosition: number;
  readonly firstCorrect: boolean;
  readonly lastCorrect: boolean;
  readonly everCorrect: boolean;
}

/** The last successful read of a file. */
export interface FileRead {
  readonly position: number;
  /** Null when the sim does not have it whole: colony shrank the output, or a summary did not keep it. */
  readonly content: string | null;
  readonly hasMarkers: boolean;
  readonly strategy: ResolutionStrategy;
}

/** The last search that came back: its pattern, and the files it matched in the order it listed them. */
export interface SearchFound {
  readonly position: number;
  readonly pattern: string;
  readonly files: readonly string[];
}

export interface StepFailures {
  readonly count: number;
  readonly lastError: string;
}

export interface WorkerFacts {
  /** The position the next action gets. */
  readonly nextPosition: number;
  /** Whether list_dir came back. */
  readonly listed: boolean;
  readonly index: IndexKnowledge;
  /** Index lines of the task's modules the sim has seen in the index, by reading or writing it. */
  readonly indexLinesSeen: ReadonlySet<string>;
  /** Every file the sim changed, in the order it first changed them. */
  readonly touched: readonly string[];
  /** The position of the last successful write_file of each path. */
  readonly lastWrites: ReadonlyMap<string, number>;
  readonly moduleWrites: ReadonlyMap<string, ModuleWrites>;
  readonly lastReads: ReadonlyMap<string, FileRead>;
  /** Where the workspace last changed: a successful write or edit, or a merge that brought main in. */
  readonly lastChange: number;
  /** Runs of the project's test command that produced a report, pass or fail. */
  readonly runs: readonly TestRun[];
  /** The package installs (`installCommandFor`) and declarations (`declareCommandFor`) of the task's modules that succeeded. */
  readonly installed: ReadonlySet<string>;
  /** The package installs that failed for want of network: the packages are declared in package.json instead. */
  readonly offline: ReadonlySet<string>;
  readonly merges: readonly MergeAttempt[];
  /** Tool errors per step (tool and target); a failed test run or a merge conflict is not one: the sim acts on those. */
  readonly stepFailures: ReadonlyMap<string, StepFailures>;
  /** Whether the last call was malformed and rejected. */
  readonly lastCallRejected: boolean;
  /** Not carried by a summary: a worker that needs it after a compaction searches again. */
  readonly lastSearch: SearchFound | null;
}

export const NO_FACTS: WorkerFacts = {
  nextPosition: 0,
  listed: false,
  index: { state: 'unread' },
  indexLinesSeen: new Set(),
  touched: [],
  lastWrites: new Map(),
  moduleWrites: new Map(),
  lastReads: new Map(),
  lastChange: -1,
  runs: [],
  installed: new Set(),
  offline: new Set(),
  merges: [],
  stepFailures: new Map(),
  lastCallRejected: false,
  lastSearch: null,
};

/** One call of the sim's with its result, as the conversation holds them. */
export interface WorkerAction {
  /** The call read back through the tool schemas; null when it was malformed. */
  readonly call: WorkerCall | null;
  readonly result: { readonly content: string; readonly isError: boolean } | null;
}

/** The facts after `actions`, starting from `start`. */
export function foldWorkerActions(start: WorkerFacts, actions: readonly WorkerAction[], scenario: Scenario): WorkerFacts {
  const facts = {
    ...start,
    indexLinesSeen: new Set(start.indexLinesSeen),
    touched: [...start.touched],
    lastWrites: new Map(start.lastWrites),
    moduleWrites: new Map(start.moduleWrites),
    lastReads: new Map(start.lastReads),
    runs: [...start.runs],
    installed: new Set(start.installed),
    offline: new Set(start.offline),
    merges: [...start.merges],
    stepFailures: new Map(start.stepFailures),
  };
  const { index: indexPath, test: command } = scenario.project;
  const modules = new Map(scenario.modules.map((module) => [module.path, module]));
  const lines = scenario.modules.map((module) => indexLineFor(indexPath, module.path));
  const installs = new Set(scenario.modules.flatMap((module) => [installCommandFor(module) ?? [], declareCommandFor(module) ?? []].flat()));
  const know = (knowledge: IndexKnowledge): void => {
    facts.index = knowledge;
    if (knowledge.state !== 'known') return;
    const present = new Set(knowledge.content.split('\n').map((line) => line.trim()));
    for (const line of lines) if (present.has(line)) facts.indexLinesSeen.add(line);
  };
  for (const { call, result } of actions) {
    const position = facts.nextPosition;
    facts.nextPosition += 1;
    facts.lastCallRejected = call === null && result?.isError === true;
    if (call === null || result === null) continue;
    const ok = !result.isError;
    switch (call.name) {
      case TOOL_NAMES.listDir:
        facts.listed = true;
        break;
      case TOOL_NAMES.readFile: {
        const shrunk = isShrunkOutput(result.content);
        if (ok) {
          const content = shrunk ? null : result.content;
          // What colony shrank cannot be trusted for markers: the sim reads it again before acting on it.
          const hasMarkers = shrunk || hasConflictMarkers(result.content);
          facts.lastReads.set(call.input.path, { position, content, hasMarkers, strategy: strategyFor(call.input.path, result.content, indexPath) });
        }
        if (call.input.path === indexPath) know(!ok ? { state: 'missing' } : shrunk ? { state: 'stale' } : { state: 'known', content: result.content });
        break;
      }
      case TOOL_NAMES.writeFile: {
        if (!ok) break;
        const { path, content } = call.input;
        changed(facts, path, position);
        facts.lastWrites.set(path, position);
        const module = modules.get(path);
        if (module !== undefined) {
          const correct = content === renderModuleSource(module, { buggy: false });
          const earlier = facts.moduleWrites.get(path);
          facts.moduleWrites.set(path, {
            firstPosition: earlier?.firstPosition ?? position,
            firstCorrect: earlier?.firstCorrect ?? correct,
            lastCorrect: correct,
            everCorrect: (earlier?.everCorrect ?? false) || correct,
          });
        }
        if (path === indexPath) know({ state: 'known', content });
        break;
      }
      case TOOL_NAMES.editFile: {
        if (ok) changed(facts, call.input.path, position);
        if (call.input.path !== indexPath) break;
        const known = facts.index;
        if (!ok || known.state !== 'known') know({ state: 'stale' });
        else {
          const { old_string: before, new_string: after, replace_all: all } = call.input;
          know({ state: 'known', content: all === true ? known.content.split(before).join(after) : known.content.replace(before, () => after) });
        }
        break;
      }
      case TOOL_NAMES.search:
        if (ok) facts.lastSearch = { position, pattern: call.input.pattern, files: matchedFiles(result.content) };
        break;
      case TOOL_NAMES.runCommand: {
        const restored = restoredPathOf(call.input.command);
        if (restored !== null) {
          const restoreReport = readCommandReport(result.content);
          if (ok && restoreReport !== null && commandPassed(restoreReport)) changed(facts, restored, position);
          break;
        }
        if (installs.has(call.input.command)) {
          // An install that did not pass is a step that failed, given up after a few tries like any other.
          const installReport = readCommandReport(result.content);
          if (ok && installReport !== null && commandPassed(installReport)) {
            facts.installed.add(call.input.command);
            changed(facts, 'package.json', position);
          } else if (lacksNetwork(result.content)) {
            facts.offline.add(call.input.command);
          } else {
            const key = stepKeyOf(call);
            facts.stepFailures.set(key, { count: (facts.stepFailures.get(key)?.count ?? 0) + 1, lastError: result.content });
          }
          continue;
        }
        const report = call.input.command === command ? readCommandReport(result.content) : null;
        if (report === null) break;
        const failing = commandPassed(report) ? [] : failingTestNames(report.output);
        facts.runs.push({
          position,
          passed: commandPassed(report),
          statusLine: report.statusLine,
          failing,
          passCount: passCount(report.output),
          // Of a shrunk report only what follows the cut is evidence.
          tail: tailOf(unshrunkEnd(report.output)),
        });
        break;
      }
      case TOOL_NAMES.mergeToMain: {
        const kind = classifyMerge(result.content, result.isError);
        facts.merges.push({ position, kind, files: kind === 'conflict' ? conflictedFiles(result.content) : [], content: result.content });
        // A merge brings main's changes into the workspace, so the index may have changed.
        if (kind === 'conflict' || kind === 'merged') know({ state: 'stale' });
        if (kind === 'conflict') facts.lastChange = position;
        break;
      }
      default:
        break;
    }
    if (!ok && !isActedOn(call, result.content)) {
      const key = stepKeyOf(call);
      facts.stepFailures.set(key, { count: (facts.stepFailures.get(key)?.count ?? 0) + 1, lastError: result.content });
    }
  }
  return facts;
}

/** The files of a search's `path:line:text` lines, each once, in order. */
function matchedFiles(output: string): string[] {
  const files = output.split('\n').flatMap((line) => /^([^:\n]+):\d+:/.exec(line)?.[1] ?? []);
  return [...new Set(files)];
}

function changed(facts: { touched: string[]; lastChange: number }, path: string, position: number): void {
  if (!facts.touched.includes(path)) facts.touched.push(path);
  facts.lastChange = position;
}

/** A failed test run or a merge conflict is something to act on, not a step that failed. */
function isActedOn(call: WorkerCall, content: string): boolean {
  if (call.name === TOOL_NAMES.runCommand && readCommandReport(content) !== null) return true;
  return call.name === TOOL_NAMES.mergeToMain && classifyMerge(content, true) === 'conflict';
}

export function classifyMerge(content: string, isError: boolean): MergeKind {
  if (/^nothing to merge/i.test(content.trim())) return 'nothing';
  if (!isError && /^merged into \S+ as /i.test(content.trim())) return 'merged';
  if (isError && conflictedFiles(content).length > 0) return 'conflict';
  return 'error';
}

function conflictedFiles(content: string): string[] {
  const match = /conflicts in files:\s*(.+)/i.exec(content);
  if (match?.[1] === undefined) return [];
  return match[1]
    .split(',')
    .map((file) => file.trim())
    .filter((file) => file.length > 0);
}

/** Whether `path` was written after `position`. */
export function writtenAfter(facts: WorkerFacts, path: string, position: number): boolean {
  return (facts.lastWrites.get(path) ?? -1) > position;
}

/** The last read of `path` when it came after `position`, else null. */
export function readAfter(facts: WorkerFacts, path: string, position: number): FileRead | null {
  const read = facts.lastReads.get(path);
  return read !== undefined && read.position > position ? read : null;
}
