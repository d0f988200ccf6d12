import { Box, Text } from 'ink';
import type { AgentView } from '../../observe/view/run-view.js';
import { dollars, fit, shortDuration, shortNumber } from './figures.js';
import { stateColor } from './header.js';
import type { TreeRow, TreeSort } from './tree-rows.js';

export interface AgentTreeProps {
  readonly rows: readonly TreeRow[];
  readonly selectedId: string | null;
  readonly sort: TreeSort;
  readonly width: number;
  /** Lines for rows; the tree scrolls to keep the selected row in them. */
  readonly height: number;
  readonly now: number;
}

const ROLE_LABEL: Readonly<Record<string, string>> = { 'root-planner': 'root', 'sub-planner': 'planner', worker: 'worker' };

/**
 * The agent tree, one line per agent, scrolled to the selection: only the lines that fit are
 * drawn, so a tree of hundreds of agents costs a screenful per frame.
 */
export function AgentTree({ rows, selectedId, sort, width, height, now }: AgentTreeProps) {
  const selected = Math.max(0, rows.findIndex((row) => row.agent.id === selectedId));
  const lines = Math.max(1, height - 1);
  const first = Math.min(Math.max(0, selected - Math.floor(lines / 2)), Math.max(0, rows.length - lines));
  const shown = rows.slice(first, first + lines);
  const position = rows.length > lines ? ` ${first + 1}-${first + shown.length} of ${rows.length}` : '';
  const doingWidth = doingColumn(width);
  return (
    <Box flexDirection="column" height={height}>
      <Text dimColor wrap="truncate">
        {fit(`agents (sorted by ${sort})${position}   ${'state'.padEnd(8)} ${'doing'.padEnd(doingWidth)} ${'steps'.padStart(5)} ${'tokens'.padStart(6)} ${'cost'.padStart(6)}`, width)}
      </Text>
      {shown.map((row) => (
        <AgentLine key={row.agent.id} row={row} selected={row.agent.id === selectedId} width={width} doingWidth={doingWidth} now={now} />
      ))}
    </Box>
  );
}

/** The "doing" column: a quarter of the width, within reason, so a narrow terminal keeps room for names. */
function doingColumn(width: number): number {
  return Math.max(12, Math.min(30, Math.floor(width / 4)));
}

function AgentLine({ row, selected, width, doingWidth, now }: { row: TreeRow; selected: boolean; width: number; doingWidth: number; now: number }) {
  const { agent } = row;
  const caret = row.children === 0 ? ' ' : row.collapsed ? '▸' : '▾';
  const hidden = row.collapsed ? ` (+${row.children})` : '';
  const figures = `${String(agent.steps).padStart(5)} ${shortNumber(agent.tokens).padStart(6)} ${dollars(agent.costUsd).padStart(6)}`;
  const doing = fit(describeDoing(agent, now), doingWidth).padEnd(doingWidth);
  const state = agent.state.padEnd(8);
  const nameWidth = Math.max(10, width - figures.length - doing.length - state.length - 4);
  const name = fit(`${'  '.repeat(row.depth)}${caret} ${ROLE_LABEL[agent.role] ?? agent.role} ${agent.id}${hidden} ${agent.title}`, nameWidth).padEnd(nameWidth);
  return (
    <Text wrap="truncate" inverse={selected}>
      {name} <Text color={stateColor(agent.state)}>{state}</Text> {doing} {figures}
    </Text>
  );
}

/** For how long the agent has been doing what: `12s run_command npm test`, `3s thinking`, or how it ended. */
function describeDoing(agent: AgentView, now: number): string {
  if (agent.activity !== null) {
    const how = shortDuration(now - agent.activity.since);
    if (agent.activity.kind === 'model') return `${how} thinking`;
    if (agent.activity.kind === 'acceptance') return `${how} checks: ${agent.activity.detail}`;
    return `${how} ${agent.activity.name} ${agent.activity.detail}`;
  }
  if (agent.endedAt !== null) return agent.reason ?? '';
  return agent.state === 'waiting' ? 'waiting for handoffs' : '';
}
