import { Box, Text } from 'ink';
import type { TailLine } from '../../observe/view/run-view.js';
import { clockTime, fit } from './figures.js';
import { usePaint } from './colors.js';

export interface EventTailProps {
  readonly tail: readonly TailLine[];
  readonly width: number;
  readonly height: number;
}

const ALARMING = new Set(['agent.failed', 'agent.hung', 'model.failed', 'merge.conflicted', 'budget.exhausted', 'disk.full', 'context.compaction-failed']);

/** The latest events, newest at the bottom, one line each. */
export function EventTail({ tail, width, height }: EventTailProps) {
  const paint = usePaint();
  const shown = tail.slice(-Math.max(0, height - 1));
  return (
    <Box flexDirection="column" height={height}>
      <Text dimColor>{`events ${'─'.repeat(Math.max(0, width - 7))}`.slice(0, width)}</Text>
      {shown.map((line) => (
        <Text key={line.seq} wrap="truncate" {...(ALARMING.has(line.type) ? paint('red') : {})}>
          {fit(`${clockTime(line.ts)} ${line.agentId.padEnd(14)} ${line.text}`, width)}
        </Text>
      ))}
    </Box>
  );
}
