import type { CommandAnalysis, CommandRun, FailingCommand, ToolFailures } from './types.js';
import type { EventOf } from '../event-of.js';
import { createTopList, shareOf } from '../ranking.js';
import { headOf, tailOf, textKey } from '../text-keys.js';

import { CUT_OFF_OPENING, EVIDENCE_FIRST_OPENING, NOT_LANDED_OPENING, OTHERS_TESTS_OPENING, PUBLISH_BOUND_OPENING, RELEASE_REFUSED_OPENING, REPUBLISHED_OPENING, RETRY_CAP_OPENING, STRAY_NOTES_OPENING } from '../../protocol/message-openings.js';

/** The tool that runs agents' shell commands (see tools/run-command-tool.ts). */
export const COMMAND_TOOL = 'run_command';

const SLOWEST_LISTED = 10;
const FAILING_LISTED = 10;
/** Command texts are kept whole for grouping but cut for the report. */
const COMMAND_CHARS = 300;
const SAMPLE_OUTPUT_CHARS = 600;
/**
 * Failing commands whose last output is kept. A log where every command is different keeps this
 * many samples, not one per command; the ones with the fewest failures give theirs up first,
 * so the most-failing commands, the ones reported, keep theirs.
 */
const SAMPLES_KEPT = 200;

interface CommandTotals {
  /** The command as reported: its start when it is long. */
  readonly command: string;
  runs: number;
  failures: number;
}

interface CommandCall {
  readonly key: string;
  readonly command: string;
}

/** Commands and tool calls folded one event at a time; `result` is fresh plain data each call. */
export interface CommandStats {
  toolStarted(event: EventOf<'tool.started'>): void;
  toolEnded(event: EventOf<'tool.ended'>, taskId: string | null): void;
  result(): CommandAnalysis;
}

/**
 * The openings of colony's refusals that hold an agent to the protocol: a `done` without
 * evidence or with work not on main, a merge that adds notes about the work or edits tests the
 * task does not own, a publish beyond an answer's bound, a failed task's brief published again
 * without `retry_of`, a retry beyond the cap, a root planner's `done` on a failing main, a call
 * an answer was cut off in at the output limit. A refused call's result opens with one.
 */
const PROTOCOL_CATCHES = [
  EVIDENCE_FIRST_OPENING,
  NOT_LANDED_OPENING,
  STRAY_NOTES_OPENING,
  OTHERS_TESTS_OPENING,
  PUBLISH_BOUND_OPENING,
  REPUBLISHED_OPENING,
  RETRY_CAP_OPENING,
  RELEASE_REFUSED_OPENING,
  CUT_OFF_OPENING,
] as const;

export function createCommandStats(): CommandStats {
  // Only calls in flight are held, by agent and call id: a call that never ends (its agent died) stays, one entry each.
  const inFlight = new Map<string, CommandCall>();
  const tools = new Map<string, { calls: number; failures: number }>();
  const catches = new Map<string, number>();
  const byText = new Map<string, CommandTotals>();
  const samples = new Map<string, string>();
  const slowest = createTopList<CommandRun>(SLOWEST_LISTED, (a, b) => b.durationMs - a.durationMs);
  let runs = 0;
  let failures = 0;
  let cpuMs = 0;
  let cpuCounted = 0;

  return {
    toolStarted(event) {
      if (event.data.name !== COMMAND_TOOL) return;
      const command = commandText(event.data.input);
      inFlight.set(callKey(event.agentId, event.data.callId), { key: textKey(command), command: headOf(command, COMMAND_CHARS) });
    },
    toolEnded(event, taskId) {
      const { name, ok, output, durationMs, callId } = event.data;
      const tool = tools.get(name) ?? { calls: 0, failures: 0 };
      tool.calls += 1;
      if (!ok) tool.failures += 1;
      tools.set(name, tool);
      const caught = ok ? undefined : PROTOCOL_CATCHES.find((opening) => output.startsWith(`error: ${opening}`));
      if (caught !== undefined) catches.set(caught, (catches.get(caught) ?? 0) + 1);
      if (name !== COMMAND_TOOL) return;
      const key = callKey(event.agentId, callId);
      const call = inFlight.get(key) ?? { key: '', command: '(its start was not recorded)' };
      inFlight.delete(key);
      const succeeded = commandSucceeded(ok, output);
      runs += 1;
      if (event.data.cpuMs !== undefined) {
        cpuMs += event.data.cpuMs;
        cpuCounted += 1;
      }
      const totals = byText.get(call.key) ?? { command: call.command, runs: 0, failures: 0 };
      totals.runs += 1;
      byText.set(call.key, totals);
      if (!succeeded) {
        failures += 1;
        totals.failures += 1;
        keepSample(samples, byText, call.key, sampleOf(output));
      }
      slowest.add({ agentId: event.agentId, taskId, command: call.command, durationMs, ok: succeeded, at: event.ts });
    },
    result() {
      const failing = createTopList<FailingCommand>(FAILING_LISTED, (a, b) => b.failures - a.failures || b.share - a.share);
      let failingTotal = 0;
      for (const [key, totals] of byText) {
        if (totals.failures === 0) continue;
        failingTotal += 1;
        failing.add({ command: totals.command, runs: totals.runs, failures: totals.failures, share: shareOf(totals.failures, totals.runs), sampleOutput: samples.get(key) ?? '' });
      }
      const toolList: ToolFailures[] = [...tools]
        .map(([tool, counts]) => ({ tool, calls: counts.calls, failures: counts.failures }))
        .sort((a, b) => b.failures - a.failures || b.calls - a.calls || a.tool.localeCompare(b.tool));
      const caught = PROTOCOL_CATCHES.flatMap((opening) => (catches.has(opening) ? [{ opening, calls: catches.get(opening) ?? 0 }] : []));
      return { runs, failures, cpuMs, cpuCounted, slowest: slowest.items(), failing: failing.items(), failingTotal, tools: toolList, catches: caught };
    },
  };
}

/** Keeps `sample` as the last output of the command at `key`, giving up the sample of the command with the fewest failures when too many are kept. */
function keepSample(samples: Map<string, string>, byText: ReadonlyMap<string, CommandTotals>, key: string, sample: string): void {
  samples.set(key, sample);
  if (samples.size <= SAMPLES_KEPT) return;
  let fewest: string | null = null;
  let fewestFailures = Number.POSITIVE_INFINITY;
  for (const kept of samples.keys()) {
    const failures = byText.get(kept)?.failures ?? 0;
    if (kept !== key && failures < fewestFailures) {
      fewest = kept;
      fewestFailures = failures;
    }
  }
  if (fewest !== null) samples.delete(fewest);
}

function callKey(agentId: string, callId: string): string {
  return `${agentId}\u0000${callId}`;
}

/** The command an agent asked for: the `command` of its JSON input, or the input as sent when it is not that. */
export function commandText(input: string): string {
  try {
    const parsed: unknown = JSON.parse(input);
    if (typeof parsed === 'object' && parsed !== null && 'command' in parsed && typeof parsed.command === 'string') return parsed.command;
  } catch {
    // A malformed call: its raw text is what the agent sent.
  }
  return input;
}

/** `run_command` answers ok with a status line first; only `exit code: 0` is a success. */
export function commandSucceeded(ok: boolean, output: string): boolean {
  return ok && /^exit code: 0(\n|$)/.test(output);
}

/** The status line, then the end of what the command printed. */
function sampleOf(output: string): string {
  const newline = output.indexOf('\n');
  const status = newline === -1 ? output : output.slice(0, newline);
  const rest = newline === -1 ? '' : output.slice(newline + 1).trim();
  if (rest === '') return headOf(status, SAMPLE_OUTPUT_CHARS);
  return `${headOf(status, 200)}\n${tailOf(rest, SAMPLE_OUTPUT_CHARS)}`;
}
