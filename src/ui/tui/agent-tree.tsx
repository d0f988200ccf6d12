import { Box, Text } from 'ink';
import type { AgentView } from '../../observe/view/run-view.js';
import { dollars, fit, shortDuration, shortNumber } from './figures.js';
import { stateColor } from './header.js';
import { headingLine, leadWidth, nameCell, treeColumns, type TreeColumns } from './tree-columns.js';
import type { TreeRow, TreeSort } from './tree-rows.js';
import { usePaint } from './colors.js';

export interface AgentTreeProps {
  readonly rows: readonly TreeRow[];
  readonly selectedId: string | null;
  readonly sort: TreeSort;
  /** Ended agents left out of `rows` (the `f` key); the heading says how many. */
  readonly hiddenEnded?: number;
  readonly width: number;
  /** Lines for rows; the tree scrolls to keep the selected row in them. */
  readonly height: number;
  readonly now: number;
}

/**
 * The agent tree, one line per agent, scrolled to the selection: only the lines that fit are
 * drawn, so a tree of hundreds of agents costs a screenful per frame. The heading and the rows
 * share one set of column widths, made wide enough for the shown rows' ids.
 */
export function AgentTree({ rows, selectedId, sort, hiddenEnded = 0, width, height, now }: AgentTreeProps) {
  const selected = Math.max(0, rows.findIndex((row) => row.agent.id === selectedId));
  const lines = Math.max(1, height - 1);
  const first = Math.min(Math.max(0, selected - Math.floor(lines / 2)), Math.max(0, rows.length - lines));
  const shown = rows.slice(first, first + lines);
  const position = rows.length > lines ? { first: first + 1, last: first + shown.length, of: rows.length } : null;
  const columns = treeColumns(width, Math.max(0, ...shown.map(leadWidth)));
  return (
    <Box flexDirection="column" height={height}>
      <Text dimColor wrap="truncate">
        {headingLine(columns, { sort, position, hiddenEnded })}
      </Text>
      {shown.map((row) => (
        <AgentLine key={row.agent.id} row={row} selected={row.agent.id === selectedId} columns={columns} now={now} />
      ))}
      {rows.length === 0 && hiddenEnded > 0 ? <Text dimColor>{fit(`Every agent has ended: ${hiddenEnded} hidden, f shows them.`, width)}</Text> : null}
    </Box>
  );
}

function AgentLine({ row, selected, columns, now }: { row: TreeRow; selected: boolean; columns: TreeColumns; now: number }) {
  const paint = usePaint();
  const { agent } = row;
  const figures = `${String(agent.steps).padStart(columns.steps)} ${shortNumber(agent.tokens).padStart(columns.tokens)} ${dollars(agent.costUsd).padStart(columns.cost)}`;
  const doing = fit(describeDoing(agent, now), columns.doing).padEnd(columns.doing);
  return (
    <Text wrap="truncate" inverse={selected}>
      {nameCell(row, columns.name)} <Text {...paint(stateColor(agent.state))}>{agent.state.padEnd(columns.state)}</Text> {doing} {figures}
    </Text>
  );
}

/**
 * For how long the agent has been doing what: `12s run_command npm test`, `3s thinking`, or how
 * it ended; led by its worker host (`@build-2`) when it runs on one.
 */
function describeDoing(agent: AgentView, now: number): string {
  const doing = describeActivity(agent, now);
  return agent.host === null ? doing : `@${agent.host} ${doing}`;
}

function describeActivity(agent: AgentView, now: number): string {
  if (agent.activity !== null) {
    const how = shortDuration(now - agent.activity.since);
    if (agent.activity.kind === 'model') return `${how} thinking`;
    if (agent.activity.kind === 'acceptance') return `${how} checks: ${agent.activity.detail}`;
    return `${how} ${agent.activity.name} ${agent.activity.detail}`;
  }
  if (agent.endedAt !== null) return agent.reason ?? '';
  return agent.state === 'waiting' ? 'waiting for handoffs' : '';
}
