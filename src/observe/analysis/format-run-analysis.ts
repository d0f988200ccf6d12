import type { AgentRole } from '../../events/event-fields.js';
import type { CheckCounts, GreenAnalysis, RunAnalysis } from './types.js';
import { count, duration, oneLine, percent, tableLines } from '../text-table.js';

/** Crashed tasks listed one by one before the rest are only counted. */
const CRASHES_LISTED = 20;
const REASONS_LISTED = 3;

/**
 * A run's analysis as a person reads it: one section per question, each a short table with
 * aligned columns, "none" where there is nothing to tell. Plain text, no colours.
 */
export function formatRunAnalysis(analysis: RunAnalysis): string {
  const sections = [
    [`Run ${analysis.runId ?? '(none)'}: ${count(analysis.events)} events analysed`],
    commandLines(analysis),
    stallLines(analysis),
    loopLines(analysis),
    conflictLines(analysis),
    retryLines(analysis),
    crashLines(analysis),
    costLines(analysis),
    roleLines(analysis),
    landingLines(analysis),
    healthLines(analysis),
  ];
  return `${sections.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}

/** `31.7 s`, `1,204 s`: CPU time as the commands' header gives it. */
function cpuSeconds(ms: number): string {
  const seconds = ms / 1000;
  return seconds < 100 ? `${seconds.toFixed(1)} s` : `${count(Math.round(seconds))} s`;
}

function commandLines({ commands }: RunAnalysis): string[] {
  const cpu = commands.cpuCounted === 0 ? '' : `, ${cpuSeconds(commands.cpuMs)} of CPU${commands.cpuCounted < commands.runs ? ` in the ${count(commands.cpuCounted)} counted` : ''}`;
  const lines = [`Slowest commands (${count(commands.runs)} run, ${count(commands.failures)} failed${cpu}):`];
  if (commands.slowest.length === 0) lines.push('  none');
  else {
    const rows = commands.slowest.map((run) => [duration(run.durationMs), run.ok ? 'ok' : 'failed', run.agentId, run.taskId ?? '-', oneLine(run.command, 100)]);
    lines.push(...tableLines([{ heading: 'TIME', right: true }, { heading: 'RESULT' }, { heading: 'AGENT' }, { heading: 'TASK' }, { heading: 'COMMAND' }], rows));
  }
  lines.push('', `Most-failing commands (${count(commands.failingTotal)} distinct command(s) failed):`);
  if (commands.failing.length === 0) lines.push('  none');
  else {
    const rows = commands.failing.map((failing) => [count(failing.failures), count(failing.runs), percent(failing.share), oneLine(failing.command, 100)]);
    const table = tableLines([{ heading: 'FAILED', right: true }, { heading: 'RUNS', right: true }, { heading: 'SHARE', right: true }, { heading: 'COMMAND' }], rows);
    lines.push(...withDetails(table, commands.failing.map((failing) => [`last output: ${sampleLine(failing.sampleOutput)}`])));
  }
  lines.push('', 'Tool calls by tool (failed: the tool answered not ok):');
  if (commands.tools.length === 0) lines.push('  none');
  else lines.push(...tableLines([{ heading: 'TOOL' }, { heading: 'CALLS', right: true }, { heading: 'FAILED', right: true }], commands.tools.map((tool) => [tool.tool, count(tool.calls), count(tool.failures)])));
  lines.push('', "Calls colony refused to hold an agent to the protocol (by the refusal's opening):");
  if (commands.catches.length === 0) lines.push('  none');
  else lines.push(...tableLines([{ heading: 'REFUSED', right: true }, { heading: 'REFUSAL' }], commands.catches.map((caught) => [count(caught.calls), caught.opening])));
  return lines;
}

function stallLines({ stalls }: RunAnalysis): string[] {
  const lines = ['Hung agents (stopped by colony):'];
  if (stalls.hung.length === 0) lines.push('  none');
  else lines.push(...tableLines([{ heading: 'AGENT' }, { heading: 'TASK' }, { heading: 'SILENT', right: true }, { heading: 'LIMIT' }], stalls.hung.map((hung) => [hung.agentId, hung.taskId, duration(hung.silentMs), duration(hung.limitMs)])));
  lines.push('', 'Longest silences (between an agent\'s own events, waiting excluded):');
  if (stalls.longestSilences.length === 0) lines.push('  none');
  else {
    const rows = stalls.longestSilences.map((silence) => [duration(silence.silentMs), silence.agentId, silence.role ?? '-', silence.taskId ?? '-', `after ${silence.after}, ${silence.endedBy === null ? 'still silent at the end' : `until ${silence.endedBy}`}`]);
    lines.push(...tableLines([{ heading: 'SILENT', right: true }, { heading: 'AGENT' }, { heading: 'ROLE' }, { heading: 'TASK' }, { heading: 'WHERE' }], rows));
  }
  return lines;
}

function loopLines({ loops }: RunAnalysis): string[] {
  const lines = [`Loops (the same tool call 3+ times in a row): ${count(loops.total)}`];
  if (loops.loops.length === 0) return [...lines, '  none'];
  const rows = loops.loops.map((loop) => [count(loop.repeats), loop.agentId, loop.taskId ?? '-', loop.tool, oneLine(loop.input, 80)]);
  return [...lines, ...tableLines([{ heading: 'REPEATS', right: true }, { heading: 'AGENT' }, { heading: 'TASK' }, { heading: 'TOOL' }, { heading: 'INPUT' }], rows)];
}

function conflictLines({ conflicts }: RunAnalysis): string[] {
  const lines = [`Merge conflicts: ${count(conflicts.conflictedMerges)} conflicted merge(s), ${count(conflicts.autoResolvedMerges)} merge(s) colony resolved itself`];
  if (conflicts.files.length === 0) return [...lines, '  none'];
  const rows = conflicts.files.map((file) => [count(file.conflicted), count(file.autoResolved), file.file]);
  return [...lines, ...tableLines([{ heading: 'CONFLICTED', right: true }, { heading: 'AUTO-RESOLVED', right: true }, { heading: 'FILE' }], rows)];
}

function retryLines({ retries }: RunAnalysis): string[] {
  const lines = [`Retried tasks: ${count(retries.total)}`];
  if (retries.tasks.length === 0) return [...lines, '  none'];
  const rows = retries.tasks.map((retried) => [
    count(retried.attempts),
    retried.taskId,
    retried.outcome ?? 'open',
    `${oneLine(retried.title, 60)}${retried.chain.length > 1 ? ` (retried as ${retried.chain.slice(1).join(', ')})` : ''}`,
  ]);
  const table = tableLines([{ heading: 'ATTEMPTS', right: true }, { heading: 'TASK' }, { heading: 'OUTCOME' }, { heading: 'TITLE' }], rows);
  const details = retries.tasks.map((retried) => [
    ...retried.reasons.slice(0, REASONS_LISTED).map((reason) => `${reason.taskId}: ${oneLine(reason.reason, 140)}`),
    ...(retried.reasons.length > REASONS_LISTED ? [`and ${count(retried.reasons.length - REASONS_LISTED)} more reason(s)`] : []),
  ]);
  lines.push(...withDetails(table, details));
  return lines;
}

function crashLines({ crashes }: RunAnalysis): string[] {
  const lines = [`Crashed tasks: ${count(crashes.length)}`];
  if (crashes.length === 0) return [...lines, '  none'];
  const rows = crashes.slice(0, CRASHES_LISTED).map((crash) => [crash.taskId, crash.agentId, crash.how, `${oneLine(crash.title, 40)}: ${oneLine(crash.reason, 120)}`]);
  lines.push(...tableLines([{ heading: 'TASK' }, { heading: 'AGENT' }, { heading: 'HOW' }, { heading: 'TITLE: REASON' }], rows));
  if (crashes.length > CRASHES_LISTED) lines.push(`  and ${count(crashes.length - CRASHES_LISTED)} more (colony analyze --json lists them all)`);
  return lines;
}

function costLines({ cost }: RunAnalysis): string[] {
  const known = cost.costKnown ? '' : ' (some model calls had no price, so at least this)';
  const lines = [`Cost: ${dollars(cost.costUsd)}${known}, ${count(cost.tokens)} tokens`, 'Costliest tasks:'];
  if (cost.tasks.length === 0) lines.push('  none');
  else lines.push(...tableLines([{ heading: 'COST', right: true }, { heading: 'TOKENS', right: true }, { heading: 'TASK' }, { heading: 'KIND' }, { heading: 'TITLE' }], cost.tasks.map((task) => [dollars(task.costUsd), count(task.tokens), task.taskId, task.kind ?? '-', oneLine(task.title, 60)])));
  lines.push('Costliest subtrees (a task and everything below it):');
  if (cost.subtrees.length === 0) lines.push('  none');
  else lines.push(...tableLines([{ heading: 'COST', right: true }, { heading: 'TOKENS', right: true }, { heading: 'TASKS', right: true }, { heading: 'TASK' }, { heading: 'TITLE' }], cost.subtrees.map((tree) => [dollars(tree.costUsd), count(tree.tokens), count(tree.tasks), tree.taskId, oneLine(tree.title, 60)])));
  return lines;
}

function roleLines({ tokensByRole }: RunAnalysis): string[] {
  const roles: AgentRole[] = ['root-planner', 'sub-planner', 'worker'];
  const rows = roles.map((role) => {
    const usage = tokensByRole[role];
    return [role, count(usage.agents), count(usage.inputTokens), count(usage.outputTokens), count(usage.totalTokens), dollars(usage.costUsd)];
  });
  const columns = [{ heading: 'ROLE' }, { heading: 'AGENTS', right: true }, { heading: 'INPUT', right: true }, { heading: 'OUTPUT', right: true }, { heading: 'TOTAL', right: true }, { heading: 'COST', right: true }];
  return ['Tokens by role:', ...tableLines(columns, rows)];
}

function landingLines({ timeToLand }: RunAnalysis): string[] {
  if (timeToLand.count === 0) return ['Time from task created to landed: no task landed anything'];
  const figure = (ms: number | null) => (ms === null ? '-' : duration(ms));
  const lines = [`Time from task created to landed (${count(timeToLand.count)} tasks): median ${figure(timeToLand.medianMs)}, p90 ${figure(timeToLand.p90Ms)}, max ${figure(timeToLand.maxMs)}`];
  const rows = timeToLand.slowest.map((landing) => [duration(landing.ms), landing.taskId, oneLine(landing.title, 80)]);
  return [...lines, ...tableLines([{ heading: 'TIME', right: true }, { heading: 'TASK' }, { heading: 'TITLE' }], rows)];
}

function healthLines({ mainHealth }: RunAnalysis): string[] {
  const row = (name: string, counts: CheckCounts) => [name, count(counts.runs), count(counts.failed), counts.runs === 0 ? '-' : percent(counts.share)];
  const rows = [
    row('main check', mainHealth.main),
    row('merge checks', mainHealth.merges),
    row('acceptance checks', mainHealth.acceptance),
    row('green snapshots', mainHealth.snapshots),
    row('all', mainHealth.all),
  ];
  const last = mainHealth.lastMain;
  const lastLine = last === null ? 'Main was never checked.' : `Last check of main: ${last.passed ? 'passed' : 'FAILED'} at ${last.commit === '' ? '(no commit)' : last.commit.slice(0, 12)}`;
  const table = tableLines([{ heading: 'CHECK' }, { heading: 'RUNS', right: true }, { heading: 'FAILED', right: true }, { heading: 'SHARE', right: true }], rows);
  return ['How often main was red:', ...table, lastLine, ...(mainHealth.green === null ? [] : greenLines(mainHealth.green))];
}

/**
 * The green branch: where it points, the time main was red, whether it is red or blocked now,
 * each bisected failure with the commit and task that brought it, and how far apart green points were.
 */
function greenLines(green: GreenAnalysis): string[] {
  const where = green.commit === null ? 'has not moved in this run' : `is at ${green.commit.slice(0, 12)}`;
  const mean = green.meanTimeToGreenS === null ? 'no red period closed' : `back to green in ${duration(green.meanTimeToGreenS * 1000)} on average`;
  const name = green.branch === null ? 'The green branch' : `Green branch ${green.branch}`;
  const lines = [`${name} ${where}: main red ${percent(green.redShare)} of the run, ${mean}`];
  if (green.redNow && green.since !== null) lines.push(`Main was red at the end of the log, since ${new Date(green.since).toISOString()}`);
  if (green.blocked !== null) lines.push(`The green branch is blocked: ${oneLine(green.blocked, 120)}`);
  lines.push(`Distinct failures reported to planners: ${count(green.failures)}; bisects: ${count(green.bisects)}${green.bisects > green.bisected.length ? ` (the latest ${count(green.bisected.length)} listed)` : ''}`);
  if (green.bisected.length > 0) {
    const rows = green.bisected.map((bisect) => [
      bisect.firstBad === null ? '(at start)' : bisect.firstBad.slice(0, 12),
      bisect.taskId ?? '-',
      bisect.agentId ?? '-',
      bisect.plannerTaskId ?? '-',
      `${oneLine(bisect.failures[0] ?? '', 80)}${bisect.failureCount > 1 ? ` (+${count(bisect.failureCount - 1)} more)` : ''}${bisect.known ? ' (known)' : ''}`,
    ]);
    lines.push(...tableLines([{ heading: 'FIRST BAD' }, { heading: 'TASK' }, { heading: 'AGENT' }, { heading: 'PLANNER' }, { heading: 'FAILURE' }], rows));
  }
  const gaps = green.commitsBetweenGreen;
  if (gaps.length > 0) {
    const mean = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
    const most = gaps.reduce((max, gap) => Math.max(max, gap), 0);
    lines.push(`Commits landed between green points: ${mean.toFixed(1)} on average, at most ${count(most)} (${count(gaps.length)} move(s) of green)`);
  }
  return lines;
}

/** A failure's sample on one line: its status line, then the end of its output, where test runners put their summary. */
function sampleLine(sample: string): string {
  const [status = '', ...rest] = sample.split('\n');
  const output = rest.join(' ').replace(/\s+/g, ' ').trim();
  const end = output.length > 120 ? `…${output.slice(output.length - 119)}` : output;
  return oneLine(end === '' ? status : `${status}: ${end.replace(/^…\s*/, '… ')}`, 160);
}

/** A table's rows, each followed by its own indented detail lines. */
function withDetails(table: readonly string[], details: readonly (readonly string[])[]): string[] {
  const [header, ...rows] = table;
  return [header ?? '', ...rows.flatMap((row, index) => [row, ...(details[index] ?? []).map((detail) => `      ${detail}`)])];
}

function dollars(amount: number): string {
  return `$${amount.toFixed(4)}`;
}
