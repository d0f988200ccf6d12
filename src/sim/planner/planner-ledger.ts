import type { CommandReport } from '../reading/command-output.js';
import { commandPassed, failingTestNames, passCount, readCommandReport } from '../reading/command-output.js';
import type { HandoffMessage } from '../reading/handoff-message.js';
import { notLandedPaths } from '../reading/handoff-message.js';
import type { PlannerAction, PlannerConversation } from './planner-conversation.js';
import { greenFailureLines } from '../reading/green-protocol.js';
import { applyGreenFailures, greenProblem, isReleaseRefusal, ownFailures, releaseProblem } from './planner-green.js';
import type { Scenario } from '../scenario/scenario.js';
import { parseScenario } from '../scenario/scenario.js';
import { decodeLedger } from './planner-state.js';
import type { ModuleRecord, PlannerLedger, PublishedTask, TestRun } from './types.js';
import { isCoveringTestsCommand } from '../reading/covering-tests-protocol.js';
import { TOOL_NAMES } from '../../protocol/tool-names.js';
import { isRepublishRefusal, isRetryCapRefusal, publishBoundOf } from '../reading/publish-refusals.js';
import { MAX_PUBLISH_ERRORS } from './planner-publish.js';

const CREATED = /^Created task (\S+): /;
const DELEGATED = /^Delegated task (\S+) \(scope /;

/** The ledger of a planner that has done nothing yet. */
export function emptyLedger(scenario: Scenario): PlannerLedger {
  const modules: ModuleRecord[] = scenario.modules.map((module) => ({
    module,
    phase: 'unpublished',
    attempts: 0,
    latestTask: null,
    problems: [],
    failingTests: [],
    pendingFailures: [],
    publishErrors: 0,
  }));
  return { modules, tasks: [], lastHandoffPosition: -1, lastTestRun: null, testRunErrors: [], releaseRefusal: null };
}

/**
 * Whether a command the planner ran is its check of main: the project's test command, or the
 * tests of its area's landed modules (a sub-planner told its area's tests).
 */
function isMainCheck(command: string, scenario: Scenario): boolean {
  return command === scenario.project.test || isCoveringTestsCommand(command);
}

export function readLedger(conversation: PlannerConversation, scenario: Scenario): PlannerLedger {
  const carried = conversation.carried === null ? null : decodeLedger(conversation.carried.ledger, scenario);
  const start = carried ?? emptyLedger(scenario);
  const modules = [...start.modules];
  const byPath = new Map(modules.map((record) => [record.module.path, record]));
  const tasks = new Map<string, PublishedTask>(start.tasks.map((task) => [task.id, task]));
  let lastHandoffPosition = start.lastHandoffPosition;
  let lastTestRun: TestRun | null = start.lastTestRun;
  let testRunErrors: string[] = [...start.testRunErrors];
  let releaseRefusal = start.releaseRefusal;
  for (const event of conversation.events) {
    if (event.kind === 'green-fixup') {
      applyGreenFailures(event.failures, modules, greenProblem);
      continue;
    }
    if (event.kind === 'handoff') {
      lastHandoffPosition = event.position;
      testRunErrors = [];
      const task = tasks.get(event.handoff.taskId);
      if (task !== undefined) applyHandoff(task, event.handoff, byPath);
      continue;
    }
    if (event.kind !== 'action') continue;
    const { action } = event;
    const call = action.call;
    if (call?.name === TOOL_NAMES.createTask || call?.name === TOOL_NAMES.delegate) {
      const carried = carriedModules(call.input.brief, byPath);
      const task = publishedTask(action, carried.map((record) => record.module.path));
      for (const record of carried) {
        if (task === null) {
          const refusal = action.result?.content ?? 'no result';
          // Refused only for the answer's bound: it goes out again in the next answer, as it is.
          if (publishBoundOf(refusal) !== null) continue;
          // Told to retry the failed task rather than publish its brief again: counted, so the retry follows, but no problem of the module's.
          if (isRepublishRefusal(refusal)) {
            record.publishErrors += 1;
            continue;
          }
          // Its retries are used up: it is given up now, not sent again to be refused again.
          record.publishErrors = isRetryCapRefusal(refusal) ? MAX_PUBLISH_ERRORS : record.publishErrors + 1;
          record.problems.push(`${call.name} was refused: ${firstLine(refusal)}`);
          continue;
        }
        // A fix task is published to fix what was failing; a failure reported again while it is open is not news.
        record.failingTests = record.phase === 'failing' ? record.failingTests : [];
        record.pendingFailures = [];
        record.phase = 'open';
        record.attempts += 1;
        record.latestTask = task;
      }
      if (task !== null) tasks.set(task.id, task);
    }
    if (call?.name === TOOL_NAMES.runCommand && isMainCheck(call.input.command, scenario) && action.result !== null) {
      const report = readCommandReport(action.result.content);
      if (report === null) {
        testRunErrors.push(firstLine(action.result.content));
        continue;
      }
      lastTestRun = applyTestRun(event.position, report, modules);
    }
    if (call?.name === TOOL_NAMES.finish && action.result !== null && isReleaseRefusal(action.result)) {
      const failures = greenFailureLines(action.result.content);
      const mapped = applyGreenFailures(failures, modules, releaseProblem);
      releaseRefusal = { position: event.position, failures, unmapped: failures.filter((line) => !mapped.has(line)) };
    }
  }
  return { modules, tasks: [...tasks.values()], lastHandoffPosition, lastTestRun, testRunErrors, releaseRefusal };
}

function carriedModules(brief: string, byPath: ReadonlyMap<string, ModuleRecord>): ModuleRecord[] {
  const parsed = parseScenario(brief);
  if (!parsed.ok) return [];
  return parsed.scenario.modules.flatMap((module) => byPath.get(module.path) ?? []);
}

function publishedTask(action: PlannerAction, modulePaths: readonly string[]): PublishedTask | null {
  const { call, result } = action;
  if (call === null || result === null || result.isError) return null;
  const pattern = call.name === TOOL_NAMES.delegate ? DELEGATED : CREATED;
  const id = pattern.exec(result.content)?.[1];
  if (id === undefined || (call.name !== TOOL_NAMES.createTask && call.name !== TOOL_NAMES.delegate)) return null;
  const kind = call.name === TOOL_NAMES.delegate ? 'planner' : 'worker';
  return { id, kind, title: call.input.title, modulePaths, handoff: null };
}

/**
 * A worker's task landed when it is done and its acceptance checks, if colony ran them, did
 * not fail, or failed only as main already did before its merge and not in the module's own
 * tests: a claim the checks contradict counts as not landed, like a failed task, and is retried.
 * A sub-planner's lists what did not land as `not landed: <path>` notes and the rest landed; a
 * synthetic one (it ended without a handoff) says nothing about its modules, so none of them
 * count as landed.
 */
function applyHandoff(task: PublishedTask, handoff: HandoffMessage, byPath: ReadonlyMap<string, ModuleRecord>): void {
  task.handoff = handoff;
  const notLanded = new Set(notLandedPaths(handoff));
  const acceptance = handoff.acceptance;
  const failing = acceptance?.verdict === 'failed' ? failingTestNames(acceptance.text) : [];
  for (const path of task.modulePaths) {
    const record = byPath.get(path);
    if (record === undefined || record.latestTask?.id !== task.id) continue;
    // Failures main already had are not the task's, unless they are its module's own tests.
    const checksFailed = acceptance?.verdict === 'failed' && (!acceptance.onlyMainsFailures || ownFailures(record.module, failing).length > 0);
    const landed =
      (handoff.status === 'done' && !checksFailed) || (task.kind === 'planner' && !handoff.synthetic && !notLanded.has(path));
    record.phase = landed ? 'landed' : 'not-landed';
    const pending = record.pendingFailures;
    record.pendingFailures = [];
    record.failingTests = [];
    // Failures colony reported while the task was open were its doing: now on main, it needs a fix.
    if (landed && pending.length > 0) {
      record.phase = 'failing';
      record.failingTests = pending;
      record.problems.push(greenProblem(pending));
    }
    if (landed) continue;
    const problem = checksFailed
      ? `task ${task.id} ended ${handoff.status}, but its acceptance checks failed on main (${firstLine(handoff.acceptance?.text ?? '')}): ${handoff.summary}`
      : `task ${task.id} ended ${handoff.status}: ${handoff.summary}`;
    record.problems.push(problem);
  }
}

function applyTestRun(position: number, report: CommandReport, modules: readonly ModuleRecord[]): TestRun {
  const passed = commandPassed(report);
  const failing = passed ? [] : failingTestNames(report.output);
  const mapped = new Set<string>();
  for (const record of modules) {
    const own = ownFailures(record.module, failing);
    for (const name of own) mapped.add(name);
    // A module given up for failing tests is back on main once its tests stop failing there.
    if (own.length === 0 && record.phase === 'failing') record.phase = 'landed';
    if (own.length === 0 || record.phase !== 'landed') continue;
    record.phase = 'failing';
    record.failingTests = own;
    record.problems.push(`its tests failed on main: ${own.join('; ')}`);
  }
  const unmapped = failing.filter((name) => !mapped.has(name));
  return { position, statusLine: report.statusLine, passCount: passCount(report.output), passed, failingCount: failing.length, unmapped };
}

export function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
