import { formatAmount } from '../../events/budget-figures.js';
import type { AgentStatus, BudgetEvent, BudgetStatus, GreenStatus, RunStatus, SandboxStatus, SetupStatus } from './types.js';
import { shellWord } from '../../errors/shell-word.js';
import { count, oneLine } from '../text-table.js';

/** Failed workers listed one by one under a planner before the rest are only counted. */
const MAX_FAILED_LISTED = 10;

const FINISHED_ORDER = ['done', 'partial', 'blocked', 'failed'] as const;

/**
 * A run's status as a person reads it: the header, the counts, then the tree of agents with
 * each indented under its parent. Finished workers under a planner fold into one count line so
 * a tree of hundreds stays short; running, waiting, parked and failed ones are listed. Plain text.
 */
export function formatRunStatus(status: RunStatus): string {
  const lines = [...headerLines(status), '', 'Agents:'];
  if (status.agents.length === 0) lines.push('  none started yet');
  else lines.push(...treeLines(status.agents).map((line) => `  ${line}`));
  return `${lines.join('\n')}\n`;
}

function headerLines(status: RunStatus): string[] {
  const { run, tasks, tokens } = status;
  const started = isoSecond(run.startedAt);
  const counts = (['open', 'running', 'done', 'partial', 'blocked', 'failed'] as const)
    .map((state) => `${tasks.byStatus[state]} ${state}`)
    .join(', ');
  const cost = `$${status.costUsd.toFixed(4)}${status.costKnown ? '' : ' (some model calls had no price, so at least this)'}`;
  const resumed = run.resumes === 0 ? '' : `, resumed ${run.resumes} time${run.resumes === 1 ? '' : 's'}`;
  const lines = [
    `Run ${run.id}: ${run.state}${resumed}, wall time ${wallTime(run.durationMs)}`,
    `  ${oneLine(run.title, 100)}`,
    `  colony ${run.mode} on ${run.repo} with ${run.model}, started ${started}`,
    ...(run.trunk === null ? [] : [`  landing on ${run.trunk}${run.trunk === run.checkedOut ? ', the branch checked out' : ''}`]),
    `Tasks: ${count(tasks.total)} (${counts})`,
    `Handoffs delivered: ${count(status.handoffs.delivered)}`,
    `Commits landed: ${count(status.commits.landed)}`,
    ...acceptanceLines(status),
    ...greenLines(status),
    `Tokens: ${count(tokens.total)} (${count(tokens.input)} input, ${count(tokens.output)} output)`,
    ...promptCacheLines(status),
    `Cost: ${cost}`,
    `Model calls: ${count(status.modelCalls)}, tool calls: ${count(status.toolCalls)}`,
  ];
  if (status.compaction.count > 0) {
    const share = tokens.total === 0 ? 0 : (100 * status.compaction.tokens) / tokens.total;
    lines.push(`Compactions: ${count(status.compaction.count)} (${count(status.compaction.tokens)} tokens, ${share.toFixed(1)}% of all)`);
  }
  // A run colony stopped, or one whose process died (a crash, a kill), can be taken up again.
  if (run.mode === 'run' && (run.state === 'stopped' || run.state === 'interrupted')) lines.push(`  Continue it with: colony resume --repo ${shellWord(run.repo)}`);
  if (status.workers !== null) lines.push(`Workers: up to ${count(status.workers)} at once`);
  if (status.userAndon !== null) lines.push(`Spawning paused by you: ${oneLine(status.userAndon.reason, 100)} — release with colony andon --release`);
  if (status.pausedTaskIds.length > 0) lines.push(`Andon pulled below: ${status.pausedTaskIds.join(', ')}`);
  if (status.budget !== null) lines.push(...budgetLines(status.budget));
  if (status.setup !== null) lines.push(setupLine(status.setup, run.lastEventAt));
  if (status.sandbox !== null) lines.push(sandboxLine(status.sandbox));
  lines.push(...salvagedLines(status.salvaged));
  lines.push(...trunkRewriteLines(status.trunkRewrites));
  lines.push(...hostLines(status.hosts));
  return lines;
}

/**
 * `Prompt cache: 86.2% of input read from it (862,000 tokens), 41,000 written`; nothing while
 * no call read from or wrote to a cache (a provider that caches nothing, the sim).
 */
export function promptCacheLines(status: RunStatus): string[] {
  const { cachedInput, cacheWrite } = status.tokens;
  if (cachedInput === 0 && cacheWrite === 0) return [];
  return [`Prompt cache: ${cacheShare(status)} of input read from it (${count(cachedInput)} tokens), ${count(cacheWrite)} written`];
}

/** The share of input tokens read from the prompt cache, as `86.2%`. */
export function cacheShare(status: RunStatus): string {
  const { input, cachedInput } = status.tokens;
  return `${(input === 0 ? 0 : (100 * cachedInput) / input).toFixed(1)}%`;
}

/**
 * Each move of the trunk by someone else that took landed work off it, naming the commit and
 * what the user can do; the run's end says whether the work is back on the trunk.
 */
export function trunkRewriteLines(rewrites: RunStatus['trunkRewrites']): string[] {
  return rewrites.map((rewrite) => `Trunk rewritten: ${trunkRewriteText(rewrite)}`);
}

/** One trunk rewrite in words, naming the commit: as `colony status`, the summary and the event line say it. */
export function trunkRewriteText(rewrite: RunStatus['trunkRewrites'][number]): string {
  const commit = rewrite.commit.slice(0, 12);
  const action = rewrite.action === '' ? '' : ` (${oneLine(rewrite.action, 60)})`;
  if (rewrite.kind === 'moved') {
    const dropped = rewrite.dropped.length;
    return `${rewrite.branch} was moved from ${rewrite.previous.slice(0, 12)} to ${commit}${action} by someone other than colony, taking ${count(dropped)} landed commit${dropped === 1 ? '' : 's'} off it (${rewrite.dropped.slice(0, 3).map((sha) => sha.slice(0, 12)).join(', ')}${dropped > 3 ? ', …' : ''})`;
  }
  const files = rewrite.files;
  const undone = `commit ${commit}${action} on ${rewrite.branch}, not colony's, put ${count(files.length)} landed file${files.length === 1 ? '' : 's'} back as they were before landing (${files.slice(0, 4).join(', ')}${files.length > 4 ? ', …' : ''})`;
  if (rewrite.restored !== undefined) return `${undone}; it was made from an index colony had not yet brought up to that landing, so colony put them back in ${rewrite.restored.slice(0, 12)}`;
  return `${undone}: made from an index behind the landings?`;
}

/** Which salvage refs hold work that did not land, at most five of them by name, and how to look at one. */
export function salvagedLines(salvaged: RunStatus['salvaged']): string[] {
  if (salvaged.length === 0) return [];
  const shown = salvaged.slice(0, 5).map((work) => {
    const side = work.sideRef === null ? '' : ` and ${work.sideRef}`;
    const files = work.files === 0 ? '' : `, ${count(work.files)} uncommitted file${work.files === 1 ? '' : 's'} committed`;
    return `  ${work.ref}${side} (${work.agentId}${files})`;
  });
  const more = salvaged.length > 5 ? [`  and ${count(salvaged.length - 5)} more: colony events --type workspace.salvaged`] : [];
  const first = salvaged[0]?.ref ?? '';
  return [`Salvaged work, not on main: ${count(salvaged.length)} workspace${salvaged.length === 1 ? '' : 's'} (look with git log ${shellWord(first)})`, ...shown, ...more];
}

/**
 * `Acceptance checks: 10 passed, 2 failed (1 false claim: done, checks failed), 1 not run`, when
 * any task had them: how many claims the checks contradicted, for a person to see at a glance.
 */
export function acceptanceLines(status: RunStatus): string[] {
  const { passed, failed, notRun, falseClaims } = status.acceptance;
  if (passed + failed + notRun === 0) return [];
  const claims = falseClaims === 0 ? '' : ` (${count(falseClaims)} false claim${falseClaims === 1 ? '' : 's'}: done, checks failed)`;
  const skipped = notRun === 0 ? '' : `, ${count(notRun)} not run`;
  return [`Acceptance checks: ${count(passed)} passed, ${count(failed)} failed${claims}${skipped}`];
}

/**
 * `Green: a1b2c3d4e5f6 (12 snapshots, 2 red; main red 8% of the time, back to green in 41 s on
 * average)` when the run has a green loop, then whether main is red now and since when, the
 * failures found, and a blocked branch, each on its own line.
 */
export function greenLines(status: RunStatus): string[] {
  const { green, run } = status;
  if (green === null) return [];
  const lines = [`Green: ${green.commit === null ? 'not moved in this run' : green.commit.slice(0, 12)} (${snapshotSummary(green)})`];
  if (green.redNow && green.since !== null) {
    const at = run.startedAt + run.durationMs;
    const how = run.state === 'running' ? 'is red now' : 'was red when the run ended';
    lines.push(`  Main ${how}, since ${isoSecond(green.since)} (${wallTime(Math.max(0, at - green.since))})`);
  }
  if (green.failures + green.bisects > 0) lines.push(`  ${count(green.failures)} distinct failure(s) reported to planners, ${count(green.bisects)} bisect(s)`);
  if (green.blocked !== null) lines.push(`  Branch ${green.branch ?? '(unnamed)'} is blocked: ${oneLine(green.blocked, 100)}`);
  return lines;
}

function snapshotSummary(green: GreenStatus): string {
  const snapshots = `${count(green.snapshots)} snapshot${green.snapshots === 1 ? '' : 's'}`;
  if (green.snapshots === 0) return 'no snapshot yet';
  if (green.redSnapshots === 0) return `${snapshots}, none red`;
  const share = green.redShare > 0 && green.redShare < 0.005 ? 'under 1%' : `${Math.round(green.redShare * 100)}%`;
  const mean = green.meanTimeToGreenS === null ? '' : `, back to green in ${secondsOrLonger(green.meanTimeToGreenS)} on average`;
  return `${snapshots}, ${count(green.redSnapshots)} red; main red ${share} of the time${mean}`;
}

/** `41 s` under a minute, else as a wall time (`4m 05s`). */
function secondsOrLonger(seconds: number): string {
  return seconds < 60 ? `${Math.round(seconds)} s` : wallTime(seconds * 1000);
}

function isoSecond(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** `Budget: 81,020 of 100,000 tokens (81%), warned` and so on, one line per limit set. */
export function budgetLines(budget: BudgetStatus): string[] {
  const lines: string[] = [];
  for (const measure of ['tokens', 'usd', 'time'] as const) {
    const figure = budget[measure];
    if (figure === null) continue;
    const runEvents = (events: readonly BudgetEvent[]) => events.some((event) => event.scope === 'run' && event.measure === measure);
    const state = runEvents(budget.exhausted) ? ', used up' : runEvents(budget.warned) ? ', past 80%' : '';
    const percent = Math.floor((100 * figure.spent) / figure.limit);
    const name = measure === 'time' ? 'Time' : 'Budget';
    lines.push(`${name}: ${formatAmount(measure, figure.spent)} of ${formatAmount(measure, figure.limit)} (${percent}%)${state}`);
  }
  const subtrees = budget.exhausted.filter((event) => event.scope === 'subtree');
  if (subtrees.length > 0) lines.push(`Subtrees that used up their share: ${subtrees.map((event) => event.taskId).join(', ')}`);
  return lines;
}

function treeLines(agents: readonly AgentStatus[]): string[] {
  const position = new Map(agents.map((agent, index) => [agent.id, index]));
  const children = new Map<string, AgentStatus[]>();
  const roots: AgentStatus[] = [];
  for (const [index, agent] of agents.entries()) {
    const parentIndex = agent.parentId === null ? undefined : position.get(agent.parentId);
    // A parent that never started in this run (or started after its child) cannot hold it.
    if (agent.parentId === null || parentIndex === undefined || parentIndex >= index) {
      roots.push(agent);
      continue;
    }
    const siblings = children.get(agent.parentId) ?? [];
    siblings.push(agent);
    children.set(agent.parentId, siblings);
  }
  const rootPlannersFirst = [
    ...roots.filter((agent) => agent.role === 'root-planner'),
    ...roots.filter((agent) => agent.role !== 'root-planner'),
  ];
  const lines: string[] = [];
  for (const root of rootPlannersFirst) appendAgent(root, 0, children, lines);
  return lines;
}

function appendAgent(agent: AgentStatus, depth: number, children: ReadonlyMap<string, AgentStatus[]>, lines: string[]): void {
  lines.push(`${'  '.repeat(depth)}${agentLine(agent)}`);
  const below = children.get(agent.id) ?? [];
  const finishedWorkers = below.filter((child) => child.role === 'worker' && isFinished(child));
  let failedListed = 0;
  for (const child of below) {
    if (child.role === 'worker' && isFinished(child)) {
      if (child.state !== 'failed' || failedListed >= MAX_FAILED_LISTED) continue;
      failedListed += 1;
    }
    appendAgent(child, depth + 1, children, lines);
  }
  if (finishedWorkers.length > 0) lines.push(`${'  '.repeat(depth + 1)}${finishedSummary(finishedWorkers, failedListed)}`);
}

/** The worker hosts of a run on several machines, one line each; none for a run on one. */
function hostLines(hosts: RunStatus['hosts']): string[] {
  if (hosts.length === 0) return [];
  const working = hosts.filter((host) => host.state === 'working').length;
  return [
    `Hosts: ${count(working)} working, ${count(hosts.length - working)} left, besides the run's own process`,
    ...hosts.map((host) =>
      host.state === 'working'
        ? `  ${host.name}: working since ${isoSecond(host.since)}, up to ${count(host.workers)} worker(s), landing on ${host.origin}`
        : `  ${host.name}: left at ${isoSecond(host.since)}: ${oneLine(host.reason ?? '', 100)}${host.released === 0 ? '' : ` (${count(host.released)} task(s) released)`}`,
    ),
  ];
}

function agentLine(agent: AgentStatus): string {
  const steps = `${agent.steps} step${agent.steps === 1 ? '' : 's'}`;
  const line = `${agent.role} ${agent.id}${agent.host === null ? '' : ` on ${agent.host}`}  ${agent.state}  ${steps}  ${oneLine(agent.title, 80)}`;
  // A failed agent that handed off says why in its summary; one that died, in its reason.
  const why = agent.state === 'failed' ? (agent.summary ?? agent.reason) : null;
  return why === null ? line : `${line}  (${oneLine(why, 100)})`;
}

/** "38 workers finished: 36 done, 2 failed", saying how many failed ones were not listed. */
function finishedSummary(workers: readonly AgentStatus[], failedListed: number): string {
  const parts = FINISHED_ORDER.flatMap((state) => {
    const number = workers.filter((worker) => worker.state === state).length;
    return number === 0 ? [] : [`${count(number)} ${state}`];
  });
  const failed = workers.filter((worker) => worker.state === 'failed').length;
  const unlisted = failed > failedListed ? ` (${count(failed - failedListed)} failed not listed)` : '';
  const noun = workers.length === 1 ? 'worker' : 'workers';
  return `${count(workers.length)} ${noun} finished: ${parts.join(', ')}${unlisted}`;
}

function isFinished(agent: AgentStatus): boolean {
  return agent.state !== 'running' && agent.state !== 'waiting' && agent.state !== 'parked';
}

/** Whole seconds, with minutes and hours once there are any: "45s", "4m 05s", "26h 03m 09s". */
export function wallTime(ms: number): string {
  const totalSeconds = Math.floor(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  const pad = (value: number) => String(value).padStart(2, '0');
  if (hours > 0) return `${hours}h ${pad(minutes)}m ${pad(seconds)}s`;
  if (minutes > 0) return `${minutes}m ${pad(seconds)}s`;
  return `${seconds}s`;
}

/** `Sandbox: bubblewrap, network only registry.npmjs.org (12 request(s) allowed, 2 refused)`; unconfined runs say so. */
/** `Setup: npm ci … from https://registry.npmjs.org/, installed 204.0 MB in 55.0 s`, or why there was none. */
export function setupLine(setup: SetupStatus, now: number): string {
  const what = setup.command === null ? '' : ` ${setup.command}${setup.registry === null ? '' : ` from ${setup.registry}`}`;
  const took = (ms: number | null) => (ms === null ? '' : ` in ${(ms / 1000).toFixed(1)} s`);
  switch (setup.state) {
    case 'installing':
      return `Setup:${what}, running for ${(Math.max(0, now - (setup.startedAt ?? now)) / 1000).toFixed(0)} s`;
    case 'ready':
      return `Setup:${what}, ${setup.reused ? 'reused' : 'installed'} ${((setup.bytes ?? 0) / 2 ** 20).toFixed(1)} MB${took(setup.durationMs)}`;
    case 'failed':
      return `Setup FAILED${took(setup.durationMs)}:${what}: ${oneLine(setup.reason ?? '', 400)}`;
    case 'skipped':
      return `Setup: none (${oneLine(setup.reason ?? '', 200)})`;
  }
}

function sandboxLine(sandbox: SandboxStatus): string {
  const requests = sandbox.networkAllowed + sandbox.networkRefused === 0 ? '' : ` (${count(sandbox.networkAllowed)} request(s) allowed, ${count(sandbox.networkRefused)} refused)`;
  if (sandbox.method === 'none') return 'Sandbox: none: commands ran unconfined, as asked';
  return `Sandbox: ${sandbox.method}, network ${sandbox.network}${requests}`;
}
