import { Box, Text } from 'ink';
import type { RunView } from '../../observe/run-view.js';
import { dollars, fit, shortDuration, shortNumber } from './figures.js';
import { sparkline } from './sparkline.js';

export interface HeaderProps {
  readonly view: RunView;
  readonly width: number;
  /** What the source adds to the first line: "live", "replay 4x paused", "reading the log 40%". */
  readonly mode: string;
}

const SPARK_WIDTH = 20;

/** The run in three lines: what it is and how it stands, totals, and throughput per minute. */
export function Header({ view, width, mode }: HeaderProps) {
  const { status } = view;
  const agents = view.agents;
  const count = (state: string) => agents.filter((agent) => agent.state === state).length;
  const running = count('running');
  const workersAtWork = agents.filter((agent) => agent.role === 'worker' && agent.endedAt === null).length;
  const limit = status.workers === null ? '' : `/${status.workers}`;
  const ended = agents.filter((agent) => agent.endedAt !== null).length;
  const byStatus = Object.entries(status.tasks.byStatus)
    .filter(([, tasks]) => tasks > 0)
    .map(([name, tasks]) => `${tasks} ${name}`)
    .join(' ');
  const cost = `${dollars(status.costUsd)}${status.costKnown ? '' : '+'}`;
  const series = (pick: (point: RunView['throughput'][number]) => number) => sparkline(view.throughput.map(pick), SPARK_WIDTH);
  const errors = view.errors.counts;
  const failures = errors['agent-failure'] + errors.hung;
  const hold = status.userHold === null ? null : `HELD (andon): ${status.userHold.reason}`;
  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text bold>colony</Text> {status.run.id} <Text color={stateColor(status.run.state)}>{status.run.state}</Text> {shortDuration(status.run.durationMs)} · {fit(status.run.title, 40)} · {mode}
        {hold === null ? '' : ' · '}
        {hold === null ? null : <Text color="red" bold>{hold}</Text>}
      </Text>
      <Text wrap="truncate">
        agents {agents.length}: {running} running {count('waiting')} waiting {ended} ended · workers {workersAtWork}
        {limit} · tasks {status.tasks.total}: {byStatus === '' ? 'none yet' : byStatus} · commits {status.commits.landed} · {shortNumber(status.tokens.total)} tok {cost}
      </Text>
      <Text wrap="truncate">
        commits/min {series((point) => point.commits)} tools/min {series((point) => point.toolCalls)} tokens/min {series((point) => point.tokens)} · retries {errors['model-retry']} conflicts {errors['merge-conflict']} failures {failures}
      </Text>
      <Text dimColor>{'─'.repeat(Math.max(0, width))}</Text>
    </Box>
  );
}

export function stateColor(state: string): string {
  switch (state) {
    case 'running':
      return 'green';
    case 'waiting':
    case 'parked':
      return 'yellow';
    case 'done':
      return 'cyan';
    case 'partial':
    case 'blocked':
    case 'stopped':
    case 'interrupted':
      return 'magenta';
    default:
      return 'red';
  }
}
