import { Box, Text } from 'ink';
import type { AgentView } from '../../observe/view/run-view.js';
import { dollars, fit, shortNumber } from './figures.js';
import { stateColor } from './header.js';
import { DETAIL_TABS, type DetailTab } from './detail-lines.js';
import { usePaint } from './colors.js';

export interface AgentDetailProps {
  readonly agent: AgentView | null;
  readonly agentId: string;
  readonly tab: DetailTab;
  /** The tab's lines, already wrapped to the width. */
  readonly lines: readonly string[];
  /** The first line shown. */
  readonly offset: number;
  readonly width: number;
  readonly height: number;
}

/** One agent's page: who it is, then a tab of its transcript, scratchpad, handoffs or diff, scrolled. */
export function AgentDetail({ agent, agentId, tab, lines, offset, width, height }: AgentDetailProps) {
  const paint = usePaint();
  const room = Math.max(1, height - 2);
  const first = Math.min(Math.max(0, offset), Math.max(0, lines.length - room));
  const shown = lines.slice(first, first + room);
  const where = lines.length > room ? `lines ${first + 1}-${first + shown.length} of ${lines.length}` : `${lines.length} line(s)`;
  return (
    <Box flexDirection="column" height={height} width={width}>
      <Text wrap="truncate">
        <Text bold>{agentId}</Text>
        {agent === null ? null : (
          <Text>
            {' '}
            {agent.role} <Text {...paint(stateColor(agent.state))}>{agent.state}</Text> · {fit(agent.title, 50)} · {agent.steps} steps · {shortNumber(agent.tokens)} tok · {dollars(agent.costUsd)}
          </Text>
        )}
      </Text>
      <Text wrap="truncate">
        {DETAIL_TABS.map((name, index) => (
          <Text key={name} inverse={name === tab}>
            {` ${index + 1} ${name} `}
          </Text>
        ))}
        <Text dimColor> {where}</Text>
      </Text>
      {shown.map((line, index) => (
        <Text key={first + index} wrap="truncate">
          {line === '' ? ' ' : line}
        </Text>
      ))}
    </Box>
  );
}
