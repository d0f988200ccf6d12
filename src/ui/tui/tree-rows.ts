import type { AgentView } from '../../observe/view/run-view.js';

/** How siblings are ordered: at work first as they started, busiest first, or costliest first. */
export type TreeSort = 'tree' | 'activity' | 'cost';
export const TREE_SORTS: readonly TreeSort[] = ['tree', 'activity', 'cost'];

/** One visible line of the agent tree. */
export interface TreeRow {
  readonly agent: AgentView;
  readonly depth: number;
  /** Agents directly below it, shown or not. */
  readonly children: number;
  readonly collapsed: boolean;
}

const STATE_ORDER: Readonly<Record<string, number>> = { running: 0, parked: 1, waiting: 2 };

/**
 * The agent tree as the lines to draw: each agent under the one that published its task,
 * siblings in `sort` order, nothing below a collapsed agent, and no ended agent with
 * `hideEnded`. An agent whose parent is not in the list (the root planner, `colony work`, a
 * worker whose ended planner is hidden) starts a tree of its own.
 */
export function treeRows(all: readonly AgentView[], collapsed: ReadonlySet<string>, sort: TreeSort, hideEnded = false): TreeRow[] {
  const agents = hideEnded ? all.filter((agent) => agent.endedAt === null) : all;
  const ids = new Set(agents.map((agent) => agent.id));
  const children = new Map<string | null, AgentView[]>();
  for (const agent of agents) {
    const parent = agent.parentId !== null && ids.has(agent.parentId) ? agent.parentId : null;
    const siblings = children.get(parent);
    if (siblings === undefined) children.set(parent, [agent]);
    else siblings.push(agent);
  }
  const compare = comparator(sort);
  const rows: TreeRow[] = [];
  // Depth first without recursion: a tree of hundreds of levels is still drawn.
  const stack: { agent: AgentView; depth: number }[] = [...(children.get(null) ?? [])].sort(compare).reverse().map((agent) => ({ agent, depth: 0 }));
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const below = children.get(item.agent.id) ?? [];
    const isCollapsed = collapsed.has(item.agent.id);
    rows.push({ agent: item.agent, depth: item.depth, children: below.length, collapsed: isCollapsed });
    if (isCollapsed) continue;
    const ordered = [...below].sort(compare);
    for (let index = ordered.length - 1; index >= 0; index -= 1) {
      const child = ordered[index];
      if (child !== undefined) stack.push({ agent: child, depth: item.depth + 1 });
    }
  }
  return rows;
}

function comparator(sort: TreeSort): (left: AgentView, right: AgentView) => number {
  switch (sort) {
    case 'tree':
      // Agents at work before ended ones, so a long run's finished workers do not push the
      // running ones below the fold; each group as it started.
      return (left, right) => Number(left.endedAt !== null) - Number(right.endedAt !== null) || left.startedAt - right.startedAt;
    case 'cost':
      return (left, right) => right.costUsd - left.costUsd || right.tokens - left.tokens || left.startedAt - right.startedAt;
    case 'activity':
      // At work first; among those, the call that has gone on longest; ended agents last, latest first.
      return (left, right) =>
        (STATE_ORDER[left.state] ?? 3) - (STATE_ORDER[right.state] ?? 3) ||
        (left.activity?.since ?? Number.MAX_SAFE_INTEGER) - (right.activity?.since ?? Number.MAX_SAFE_INTEGER) ||
        (right.endedAt ?? 0) - (left.endedAt ?? 0) ||
        left.startedAt - right.startedAt;
  }
}
