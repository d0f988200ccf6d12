import type { AgentRole } from '../../events/event-fields.js';
import type { CostAnalysis, CrashedTask, LandingTime, LandingTimes, RetriedTask, RetryAnalysis, RoleUsage, SubtreeCost, TaskCost } from './types.js';
import { createTopList, nearestRank, roundDollars } from '../ranking.js';
import type { TaskEntry, TaskLedger } from './task-ledger.js';

const RETRIES_LISTED = 10;
const COSTS_LISTED = 10;
const LANDINGS_LISTED = 5;

/** Retry chains and tasks claimed again, the most attempts first. */
export function retriesOf(ledger: TaskLedger): RetryAnalysis {
  const chains = new Map<string, TaskEntry[]>();
  for (const task of ledger.tasks.values()) {
    const first = chainStart(ledger, task);
    const chain = chains.get(first.id) ?? [];
    chain.push(task);
    chains.set(first.id, chain);
  }
  const listed = createTopList<RetriedTask & { order: number }>(
    RETRIES_LISTED,
    (a, b) => b.attempts - a.attempts || b.chain.length - a.chain.length || a.order - b.order,
  );
  let total = 0;
  for (const [firstId, unordered] of chains) {
    const chain = [...unordered].sort((a, b) => a.order - b.order);
    const attempts = chain.reduce((sum, task) => sum + attemptsOf(task), 0);
    if (chain.length < 2 && attempts < 2) continue;
    total += 1;
    const first = ledger.tasks.get(firstId);
    listed.add({
      taskId: firstId,
      title: first?.title ?? firstId,
      chain: chain.map((task) => task.id),
      attempts,
      reasons: chain.flatMap((task) => task.reasons.map((reason) => ({ taskId: task.id, reason }))),
      outcome: chain.at(-1)?.outcome ?? null,
      order: first?.order ?? 0,
    });
  }
  return { tasks: listed.items().map(({ order: _order, ...retried }) => retried), total };
}

/** A task taken up again after its runner died shows it in its claim's attempt; a task never claimed was tried once if an agent started on it. */
function attemptsOf(task: TaskEntry): number {
  return Math.max(task.claimAttempt, task.agents);
}

/** The first task of the chain `task` belongs to, following `retryOf` back as far as the log knows it. */
function chainStart(ledger: TaskLedger, task: TaskEntry): TaskEntry {
  let current = task;
  const seen = new Set<string>([task.id]);
  while (current.retryOf !== null) {
    const earlier = ledger.tasks.get(current.retryOf);
    if (earlier === undefined || seen.has(earlier.id)) break;
    seen.add(earlier.id);
    current = earlier;
  }
  return current;
}

/** Every crashed task, in the order they crashed. */
export function crashesOf(ledger: TaskLedger): CrashedTask[] {
  const crashed: CrashedTask[] = [];
  for (const task of ledger.tasks.values()) if (task.crash !== null) crashed.push({ ...task.crash, title: task.title });
  return crashed.sort((a, b) => a.at - b.at);
}

export function costOf(ledger: TaskLedger): CostAnalysis {
  const byCost = (a: TaskCost, b: TaskCost) => b.costUsd - a.costUsd || b.tokens - a.tokens;
  const tasks = createTopList<TaskCost>(COSTS_LISTED, byCost);
  const subtrees = createTopList<SubtreeCost>(COSTS_LISTED, byCost);
  const children = new Map<string, TaskEntry[]>();
  for (const task of ledger.tasks.values()) {
    if (task.parentTaskId === null || !ledger.tasks.has(task.parentTaskId)) continue;
    const siblings = children.get(task.parentTaskId) ?? [];
    siblings.push(task);
    children.set(task.parentTaskId, siblings);
  }
  const rolled = new Map<string, { tokens: number; costUsd: number; tasks: number }>();
  const rollUp = (task: TaskEntry, path: Set<string>): { tokens: number; costUsd: number; tasks: number } => {
    const known = rolled.get(task.id);
    if (known !== undefined) return known;
    const sum = { tokens: tokensOf(task), costUsd: task.costUsd, tasks: 1 };
    path.add(task.id);
    for (const child of children.get(task.id) ?? []) {
      // A log that names a task its own ancestor is broken; the loop is cut, not followed.
      if (path.has(child.id)) continue;
      const below = rollUp(child, path);
      sum.tokens += below.tokens;
      sum.costUsd += below.costUsd;
      sum.tasks += below.tasks;
    }
    path.delete(task.id);
    rolled.set(task.id, sum);
    return sum;
  };
  let costUsd = 0;
  let tokens = 0;
  for (const task of ledger.tasks.values()) {
    costUsd += task.costUsd;
    tokens += tokensOf(task);
    tasks.add(taskCost(task, tokensOf(task), task.costUsd));
    if (!children.has(task.id)) continue;
    const sum = rollUp(task, new Set());
    subtrees.add({ ...taskCost(task, sum.tokens, sum.costUsd), tasks: sum.tasks });
  }
  return { costUsd: roundDollars(costUsd), tokens, costKnown: ledger.costKnown, tasks: tasks.items(), subtrees: subtrees.items() };
}

function taskCost(task: TaskEntry, tokens: number, costUsd: number): TaskCost {
  return { taskId: task.id, title: task.title, kind: task.kind, tokens, costUsd: roundDollars(costUsd) };
}

function tokensOf(task: TaskEntry): number {
  return task.inputTokens + task.outputTokens;
}

export function tokensByRoleOf(ledger: TaskLedger): Record<AgentRole, RoleUsage> {
  const usage = (role: AgentRole): RoleUsage => {
    const totals = ledger.roles[role];
    return { ...totals, totalTokens: totals.inputTokens + totals.outputTokens, costUsd: roundDollars(totals.costUsd) };
  };
  return { 'root-planner': usage('root-planner'), 'sub-planner': usage('sub-planner'), worker: usage('worker') };
}

export function landingTimesOf(ledger: TaskLedger): LandingTimes {
  const times: LandingTime[] = [];
  for (const task of ledger.tasks.values()) {
    if (task.createdAt === null || task.firstLandedAt === null) continue;
    times.push({ taskId: task.id, title: task.title, ms: Math.max(0, task.firstLandedAt - task.createdAt) });
  }
  const sorted = times.map((time) => time.ms).sort((a, b) => a - b);
  const slowest = createTopList<LandingTime>(LANDINGS_LISTED, (a, b) => b.ms - a.ms);
  for (const time of times) slowest.add(time);
  return { count: times.length, medianMs: nearestRank(sorted, 0.5), p90Ms: nearestRank(sorted, 0.9), maxMs: sorted.at(-1) ?? null, slowest: slowest.items() };
}
