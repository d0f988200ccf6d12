import { formatAmount } from '../../events/budget-figures.js';
import { trunkRewriteText } from '../status/format-run-status.js';
import type { EventData, RecordedEvent } from '../../events/event-types.js';
import type { BudgetMeasure } from '../../events/event-fields.js';

/**
 * One event as a line for a person: time, agent, what happened. No colours, safe for pipes.
 * Needs no seq, so a run's progress lines can be printed as its events are appended.
 */
export function formatEventLine(event: RecordedEvent): string {
  const time = new Date(event.ts).toISOString().slice(11, 23);
  return `${time}  ${event.agentId.padEnd(15)}  ${describeEvent(event)}`;
}

/** What an event says, in a few words. Exhaustive over the event union. */
export function describeEvent(event: RecordedEvent): string {
  switch (event.type) {
    case 'run.started':
      return `run started: ${event.data.title} (${event.data.mode}, model ${event.data.model})${trunkClause(event.data.repo, event.data.trunk)}`;
    case 'run.ended':
      return `run ended: ${event.data.status} after ${seconds(event.data.durationMs)}`;
    case 'run.configured':
      return `run configured: workers on ${event.data.settings.workerModel}, planners on ${event.data.settings.plannerModel}, up to ${event.data.settings.workers} workers`;
    case 'prompts.loaded':
      return event.data.overridden.length === 0
        ? "prompts loaded: colony's own"
        : `prompts loaded: ${event.data.overridden.map((override) => `${override.name} (sha256 ${override.sha256.slice(0, 12)})`).join(', ')} from the repository, colony's own for the rest`;
    case 'run.resumed':
      return `run resumed (${ordinal(event.data.resumes)} time) after event ${event.data.lastSeq}: ${event.data.released.length} task(s) taken back from the stopped runner${event.data.repaired === 0 ? '' : `, ${event.data.repaired} event(s) restored from the task table`}`;
    case 'host.joined':
      return `host ${event.data.host} joined: up to ${event.data.workers} worker(s), landing on ${event.data.origin} (pid ${event.data.pid})`;
    case 'host.left':
      return `host ${event.data.host} left: ${event.data.reason}${event.data.released === 0 ? '' : `, ${event.data.released} task(s) released`}`;
    case 'trunk.unfollowed':
      return `cannot follow the trunk on ${event.data.origin}: ${oneLine(event.data.reason)}`;
    case 'trunk.rewritten':
      return `trunk rewritten: ${trunkRewriteText(event.data)}`;
    case 'disk.full':
      return `cannot write colony's state in ${event.data.path} (${event.data.freeBytes === null ? 'disk full' : `${event.data.freeBytes} bytes free`}): no new agent starts until it can; ${oneLine(event.data.message)}`;
    case 'disk.recovered':
      return `colony's state can be written again after ${seconds(event.data.pausedMs)}; agents start again`;
    case 'agent.hung':
      return `${event.data.hungAgentId} recorded nothing for ${seconds(event.data.silentMs)} (limit ${seconds(event.data.limitMs)}): stopped, task ${event.data.taskId} closed as failed`;
    case 'agent.started':
      return `${event.data.role} started on "${event.data.title}" with ${event.data.model}`;
    case 'agent.ended':
      return `ended ${event.data.status} after ${event.data.steps} step(s)`;
    case 'agent.failed':
      return `failed after ${event.data.steps} step(s): ${event.data.reason}`;
    case 'agent.nudged':
      if (event.data.notice !== undefined) {
        const { notice, step, message } = event.data;
        return message === '' ? `withdrew its ${notice} notice at step ${step}` : `${notice} notice at step ${step}: ${oneLine(message, 100)}`;
      }
      return `${event.data.reminder === undefined ? 'told' : `reminded (${event.data.reminder})`} at step ${event.data.step}: ${oneLine(event.data.message, 100)}`;
    case 'context.shrunk':
      return `shrank ${event.data.outputs} older tool output(s) at step ${event.data.step}: ${event.data.beforeTokens} to ${event.data.afterTokens} tokens`;
    case 'context.compacted':
      return `compacted at step ${event.data.step}: ${event.data.beforeTokens} to ${event.data.afterTokens} tokens of a ${event.data.windowTokens}-token window (${event.data.replaced} messages summarised, ${event.data.kept} kept; the summary cost ${event.data.usage.inputTokens}+${event.data.usage.outputTokens} tokens)`;
    case 'context.compaction-failed':
      return `could not compact at step ${event.data.step} (${event.data.tokens} of ${event.data.windowTokens} tokens): ${oneLine(event.data.reason)}`;
    case 'model.requested':
      return `model call ${event.data.step} (${event.data.messages} messages)`;
    case 'model.responded': {
      const calls = event.data.toolCalls.map((call) => call.name).join(', ') || 'no tool call';
      const { inputTokens, outputTokens } = event.data.usage;
      const cost = event.data.costUsd === null ? '' : `, $${event.data.costUsd.toFixed(4)}`;
      return `model answered in ${seconds(event.data.durationMs)}: ${calls} (${inputTokens}+${outputTokens} tokens${cost})`;
    }
    case 'model.retried':
      return `model retry ${event.data.attempt} in ${seconds(event.data.delayMs)}: ${event.data.kind}: ${oneLine(event.data.message)}`;
    case 'model.failed':
      return `model failed after ${event.data.attempts} attempt(s): ${event.data.kind}: ${oneLine(event.data.message)}`;
    case 'agent.parked':
      return `parked at step ${event.data.step} for ${seconds(event.data.waitMs)}: ${event.data.kind} after ${event.data.attempts} attempt(s): ${oneLine(event.data.message)}`;
    case 'agent.unparked':
      return `resumed step ${event.data.step} after ${seconds(event.data.parkedMs)} parked`;
    case 'agent.restored': {
      const { attempt, step, interrupted, notStarted } = event.data;
      return `restored after a restart in attempt ${attempt}, after step ${step}: ${interrupted} interrupted call(s) answered without running, ${notStarted} call(s) that never started to run`;
    }
    case 'provider.limited': {
      const direction = event.data.to < event.data.from ? 'lowered' : 'raised';
      const hold = event.data.holdMs === null || event.data.holdMs === 0 ? '' : `; no calls for ${seconds(event.data.holdMs)}`;
      return `${event.data.provider}: ${direction} to ${event.data.to} calls at once (from ${event.data.from}): ${oneLine(event.data.reason)}${hold}`;
    }
    case 'provider.circuit-opened':
      return `${event.data.provider}: circuit open after ${event.data.failures} failures in a row, next try in ${seconds(event.data.retryInMs)}: ${oneLine(event.data.reason)}`;
    case 'provider.circuit-closed':
      return `${event.data.provider}: circuit closed after ${seconds(event.data.openMs)}, calls go through again`;
    case 'tool.started':
      return `${event.data.name} ${summariseInput(event.data.input)}`;
    case 'tool.ended': {
      const first = oneLine(event.data.output.split('\n', 1)[0] ?? '');
      return `${event.data.name} ${event.data.ok ? 'ok' : 'error'} in ${seconds(event.data.durationMs)}: ${first}`;
    }
    case 'workspace.created':
      return `workspace ${event.data.branch} at ${event.data.baseCommit.slice(0, 12)} in ${seconds(event.data.durationMs)}${event.data.method === undefined ? '' : ` (${event.data.method})`}`;
    case 'workspace.reopened':
      return `workspace ${event.data.branch} taken up again at ${event.data.path}${event.data.clearedLocks.length === 0 ? '' : ` (cleared ${event.data.clearedLocks.length} stale git lock(s))`}`;
    case 'workspace.removed':
      return event.data.kept ? `workspace kept at ${event.data.path}` : 'workspace removed';
    case 'dependencies.installing': {
      const { command, registry, packages, elapsedMs } = event.data;
      if (elapsedMs > 0) return `setting up: still installing after ${seconds(elapsedMs)}`;
      const counted = packages === null ? '' : ` (${packages} package${packages === 1 ? '' : 's'})`;
      return `setting up: ${command}${registry === null ? '' : ` from ${registry}`}${counted}`;
    }
    case 'dependencies.prepared': {
      const how = event.data.command === undefined ? '' : ` by ${event.data.command}`;
      const at = event.data.commit === undefined ? '' : ` for ${event.data.commit.slice(0, 12)}`;
      return `dependencies${at} ${event.data.reused ? 'reused' : 'installed'}${event.data.reused ? '' : how}: ${megabytes(event.data.bytes)} in ${seconds(event.data.durationMs)} (${event.data.key.slice(0, 12)})`;
    }
    case 'dependencies.failed':
      // Whole: the install's own words are what says why.
      return `setup failed after ${seconds(event.data.durationMs)}: ${oneLine(event.data.error, 2_400)}`;
    case 'dependencies.skipped':
      return `no shared dependencies: ${oneLine(event.data.reason, 400)}`;
    case 'dependencies.linked':
      if (event.data.changed !== undefined) return `dependencies set up again after the workspace changed ${event.data.changed.join(', ')}: ${event.data.files} file(s) in ${seconds(event.data.durationMs)}`;
      return `dependencies linked: ${event.data.files} file(s) in ${seconds(event.data.durationMs)}`;
    case 'dependencies.collected': {
      const problems = event.data.problems.length === 0 ? '' : `; ${event.data.problems.length} problem(s): ${oneLine(event.data.problems.join('; '))}`;
      return `old dependency installs deleted: ${event.data.removed.length}${problems}`;
    }
    case 'sandbox.opened':
      return event.data.method === 'bubblewrap'
        ? `sandbox: ${event.data.summary}; network: ${event.data.network}${setupNetworkText(event.data.setupNetwork)}`
        : `WARNING sandbox: ${event.data.summary}; network: ${event.data.network}${setupNetworkText(event.data.setupNetwork)}`;
    case 'network.requested':
      return `${event.data.setup === true ? 'setup ' : ''}network: ${event.data.allowed ? 'allowed' : 'refused'} ${event.data.host}:${event.data.port}`;
    case 'workspace.method-chosen':
      return `workspaces: ${event.data.method}, because ${event.data.reason}`;
    case 'workspace.salvaged': {
      const commit = event.data.commit === null ? 'no uncommitted files' : `${event.data.files.length} uncommitted file(s) as ${event.data.commit.slice(0, 12)}`;
      const side = event.data.sideBranch === null ? '' : `, detached work on ${event.data.sideBranch}`;
      return `workspace salvaged, kept as ${event.data.branch}: ${commit}${side}`;
    }
    case 'workspace.swept':
      return `swept workspaces left by an earlier run: ${event.data.removed.length} removed (${event.data.salvaged.length} salvaged), ${event.data.kept.length} kept, ${event.data.deleted.length} unused base(s) deleted`;
    case 'workspace.quota-reached':
      return `workspace disk cap reached: ${megabytes(event.data.usedBytes)} of ${megabytes(event.data.capBytes)} in ${event.data.workspaces} workspace(s); new workers wait for running ones to finish`;
    case 'merge.attempted':
      return `merge attempt ${event.data.attempt} onto ${event.data.mainBefore.slice(0, 12)}`;
    case 'merge.intended':
      return `merge intended: ${event.data.branch} as ${event.data.commit.slice(0, 12)} onto ${event.data.mainBefore.slice(0, 12)}`;
    case 'merge.landed':
      return `merged ${event.data.commit.slice(0, 12)} (${event.data.files.length} file(s), ${event.data.attempts} attempt(s))`;
    case 'merge.conflicted':
      return `merge conflict in ${event.data.files.join(', ')}${event.data.unsettled === undefined ? '' : ` (left to the agent: ${event.data.unsettled})`}`;
    case 'acceptance.started':
      return `acceptance checks of task ${event.data.taskId} started on ${event.data.commit.slice(0, 12)}: ${event.data.commands.map((command) => `\`${oneLine(command, 60)}\``).join(', ')}`;
    case 'acceptance.checked':
      return describeAcceptance(event.data);
    case 'handoff.submitted':
      return `handoff ${event.data.handoff.status}${event.data.handoff.synthetic ? ' (synthetic)' : ''}: ${oneLine(event.data.handoff.summary)}`;
    case 'task.created': {
      const scope = event.data.scope === null ? '' : ` (scope ${event.data.scope})`;
      const retry = event.data.retryOf === null ? '' : `, retries ${event.data.retryOf}`;
      const paths = event.data.paths ?? [];
      const declared = paths.length === 0 ? '' : `, paths ${paths.slice(0, 3).join(', ')}${paths.length > 3 ? ` and ${paths.length - 3} more` : ''}`;
      return `${event.data.kind} task ${event.data.taskId} created${scope}${retry}${declared}: ${oneLine(event.data.title)}`;
    }
    case 'task.claimed':
      return `${event.data.kind} task ${event.data.taskId} claimed by ${event.data.holder} (attempt ${event.data.attempt})`;
    case 'task.released':
      return `task ${event.data.taskId} released: ${oneLine(event.data.reason)}`;
    case 'handoff.delivered': {
      const to = event.data.parentTaskId === null ? 'nobody (root task)' : `task ${event.data.parentTaskId}`;
      return `handoff ${event.data.status} of task ${event.data.taskId} delivered to ${to}`;
    }
    case 'message.received': {
      const from = event.data.fromTaskId === null ? 'the user' : `task ${event.data.fromTaskId}`;
      return `message from ${from} at step ${event.data.step}: ${oneLine(event.data.content, 80)}`;
    }
    case 'agent.waiting':
      return `waiting at step ${event.data.step} for ${event.data.openChildren} open task(s)`;
    case 'scratchpad.written':
      return `scratchpad written (${event.data.content.length} characters)`;
    case 'andon.changed':
      if (event.data.taskId === null) {
        return `spawning ${event.data.paused ? 'paused' : 'released'} across the whole run by the user: ${oneLine(event.data.reason)}`;
      }
      return `andon ${event.data.paused ? 'paused' : 'resumed'} below task ${event.data.taskId}: ${oneLine(event.data.reason)}`;
    case 'goal.changed':
      if (event.data.error !== undefined) return `goal file ${event.data.path} cannot be read, so nothing was sent: ${oneLine(event.data.error)}`;
      return `goal file ${event.data.path} changed (${event.data.added} line(s) added, ${event.data.removed} removed): the root planner is told`;
    case 'message.sent':
      return `message left for task ${event.data.recipientTaskId}: ${oneLine(event.data.text, 80)}`;
    case 'main.checked':
      return `check \`${event.data.command}\` ${event.data.passed ? 'passed' : event.data.timedOut ? 'timed out' : 'failed'} on ${event.data.commit.slice(0, 12)} in ${Math.round(event.data.durationMs)} ms`;
    case 'green.checked': {
      const outcome = event.data.passed ? 'passed' : event.data.timedOut ? 'timed out' : 'failed';
      return `green snapshot (${event.data.trigger}) of ${event.data.commit.slice(0, 12)}: \`${event.data.command}\` ${outcome} in ${seconds(event.data.durationMs)}, ${event.data.landed} commit(s) since the last`;
    }
    case 'green.requested':
      return `green snapshot asked for by the user: ${oneLine(event.data.reason)}`;
    case 'green.advanced':
      return `${event.data.branch} moved to ${event.data.to.slice(0, 12)}${event.data.tag === null ? '' : ` and tagged ${event.data.tag}`}`;
    case 'green.blocked':
      return `${event.data.branch} was left where it is, not moved to ${event.data.commit.slice(0, 12)}: ${oneLine(event.data.reason)}`;
    case 'green.bisected': {
      const where = event.data.firstBad === null ? 'main failed so when the run started' : `first bad commit ${event.data.firstBad.slice(0, 12)} "${oneLine(event.data.subject, 60)}"`;
      const task = event.data.taskId === null ? '' : ` from task ${event.data.taskId}`;
      return `bisected a red snapshot in ${event.data.checks} check(s): ${where}${task}${event.data.known ? ' (already reported)' : ''}`;
    }
    case 'green.reported':
      return event.data.recipientTaskId === null
        ? `main is red (${event.data.failures.length} failure line(s)) and no planner is at work to tell`
        : `fix-up message sent to planner task ${event.data.recipientTaskId}: ${oneLine(event.data.failures[0] ?? event.data.command, 80)}`;
    case 'merge.checked':
      return `merge check ${event.data.passed ? 'passed' : 'failed'} on ${event.data.commit.slice(0, 12)} in ${seconds(event.data.durationMs)}`;
    case 'planner.finished':
      return `planner finished task ${event.data.taskId} ${event.data.status}: ${oneLine(event.data.summary)}`;
    case 'budget.set': {
      const { tokens, usd, maxHours } = event.data;
      const limits = [
        tokens === null ? null : formatAmount('tokens', tokens),
        usd === null ? null : formatAmount('usd', usd),
        maxHours === null ? null : `${maxHours} hour(s)`,
      ].filter((limit) => limit !== null);
      return `budget set: ${limits.join(', ')}`;
    }
    case 'budget.allotted': {
      const { tokens, usd } = event.data;
      const share = [tokens === null ? null : formatAmount('tokens', tokens), usd === null ? null : formatAmount('usd', usd)].filter((part) => part !== null);
      return `subtree ${event.data.taskId} may spend ${share.join(' and ')} (its share of what ${event.data.parentTaskId} had left)`;
    }
    case 'budget.warned': {
      const { measure, spent, limit } = event.data;
      return `budget warning: ${scopeName(event.data)} at ${Math.floor((100 * spent) / limit)}% of its ${limitWord(measure)}: ${formatAmount(measure, spent)} of ${formatAmount(measure, limit)}`;
    }
    case 'budget.exhausted': {
      const { measure, spent, limit, reserved, agents } = event.data;
      const held = measure === 'time' ? '' : `, ${formatAmount(measure, reserved)} held back for the last calls of ${agents} agent(s)`;
      const passed = measure === 'time' ? 'passed' : 'spent';
      return `budget used up: ${scopeName(event.data)}'s ${limitWord(measure)} of ${formatAmount(measure, limit)}: ${formatAmount(measure, spent)} ${passed}${held}`;
    }
    case 'workers.changed':
      return `worker limit changed by the user: ${event.data.previous} to ${event.data.workers} at once`;
    case 'agent.stop-requested': {
      const who = event.data.stoppedAgentId === null ? `task ${event.data.taskId} before an agent started on it` : `${event.data.stoppedAgentId} on task ${event.data.taskId}`;
      return `stopped by the user: ${who}, which closes failed: ${oneLine(event.data.reason)}`;
    }
    default:
      return assertNever(event);
  }
}

function describeAcceptance(data: EventData<'acceptance.checked'>): string {
  if (data.skipped !== null || data.commit === null) return `acceptance checks of task ${data.taskId} not run: ${oneLine(data.skipped ?? 'nothing checked')}`;
  const at = data.commit.slice(0, 12);
  if (data.passed) return `acceptance checks of task ${data.taskId} passed on ${at} (${data.results.length} command(s))`;
  const failing = data.results.filter((result) => result.exitCode !== 0).map((result) => `\`${oneLine(result.command, 60)}\``);
  const claim = data.claimed === 'done' ? 'claimed done, ' : '';
  return `acceptance checks of task ${data.taskId}: ${claim}checks failed on ${at}: ${failing.join(', ')}`;
}

function scopeName(figures: { readonly scope: 'run' | 'subtree'; readonly taskId: string }): string {
  return figures.scope === 'run' ? 'the run' : `subtree ${figures.taskId}`;
}

function limitWord(measure: BudgetMeasure): string {
  return measure === 'time' ? 'time limit' : measure === 'usd' ? 'budget in dollars' : 'token budget';
}

function assertNever(value: never): never {
  throw new Error(`unhandled event: ${JSON.stringify(value)}`);
}

function megabytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MB`;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}

function oneLine(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A tool call's arguments in short: the path or command when there is one. */
function summariseInput(input: string): string {
  try {
    const parsed: unknown = JSON.parse(input);
    if (typeof parsed === 'object' && parsed !== null) {
      const record = parsed as Record<string, unknown>;
      for (const key of ['command', 'path', 'pattern', 'message', 'summary']) {
        const value = record[key];
        if (typeof value === 'string') return oneLine(value, 80);
      }
    }
  } catch {
    return `(malformed arguments: ${oneLine(input, 60)})`;
  }
  return '';
}

function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  const suffix = teen ? 'th' : n % 10 === 1 ? 'st' : n % 10 === 2 ? 'nd' : n % 10 === 3 ? 'rd' : 'th';
  return `${n}${suffix}`;
}

/** Where a run lands: `, landing on colony/x (made from main at 1a2b3c4d5e6f) in /srv/app`. */
function trunkClause(repo: string, trunk: EventData<'run.started'>['trunk']): string {
  if (trunk === undefined) return '';
  if (trunk.branch === trunk.checkedOut) return `, landing on ${trunk.branch}, the branch checked out in ${repo}`;
  const from = trunk.made ? `made from ${trunk.checkedOut} at ${trunk.commit.slice(0, 12)}` : `at ${trunk.commit.slice(0, 12)}`;
  return `, landing on ${trunk.branch} (${from}) in ${repo}; ${trunk.checkedOut} is not touched`;
}

function setupNetworkText(setupNetwork: string | undefined): string {
  return setupNetwork === undefined ? '' : `; setup's install: ${setupNetwork}`;
}
