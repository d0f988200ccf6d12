import { Box, Text } from 'ink';
import type { GreenStatus } from '../../observe/status/types.js';
import type { RunView } from '../../observe/view/run-view.js';
import { dollars, fit, shortDuration, shortNumber } from './figures.js';
import { sparkline } from './sparkline.js';

export interface HeaderProps {
  readonly view: RunView;
  readonly width: number;
  /** What the source adds to the first line: "live", "replay 4x paused", "reading the log 40%". */
  readonly mode: string;
}

const SPARK_WIDTH = 20;
/** The run's title gets what the first line leaves, between these. */
const TITLE_MIN = 8;
const TITLE_MAX = 40;

/** The run in three lines: what it is and how it stands (main's health too), totals, and throughput per minute. */
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
  const andon = status.userAndon === null ? null : `PAUSED (andon): ${status.userAndon.reason}`;
  const health = status.green === null ? null : mainHealthOf(status.green, status.run.startedAt + status.run.durationMs);
  const first = `colony ${status.run.id} ${status.run.state} ${shortDuration(status.run.durationMs)} ·  · ${mode}`;
  const rest = (health === null ? 0 : health.width) + (andon === null ? 0 : andon.length + 3);
  const titleWidth = Math.max(TITLE_MIN, Math.min(TITLE_MAX, width - first.length - rest));
  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text bold>colony</Text> {status.run.id} <Text color={stateColor(status.run.state)}>{status.run.state}</Text> {shortDuration(status.run.durationMs)} · {fit(status.run.title, titleWidth)} · {mode}
        {health === null ? null : <MainHealth health={health} />}
        {andon === null ? '' : ' · '}
        {andon === null ? null : <Text color="red" bold>{andon}</Text>}
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

/** Main's health as the first line shows it, in parts, with how many columns it takes. */
interface MainHealthParts {
  readonly state: string;
  readonly color: 'red' | 'green' | 'gray';
  readonly rest: string;
  readonly blocked: boolean;
  readonly width: number;
}

/**
 * Main's health in a few words: `main ok · 8% red · green a1b2c3d4`, or `main RED 3m05s` while
 * the latest snapshot failed (for how long, up to `now`), and `blocked` when the green branch
 * cannot move.
 */
function mainHealthOf(green: GreenStatus, now: number): MainHealthParts {
  const state = green.redNow ? `main RED ${shortDuration(now - (green.since ?? now))}` : green.lastSnapshot === null ? 'main unchecked' : 'main ok';
  const rest = ` · ${Math.round(green.redShare * 100)}% red · green ${green.commit === null ? 'none yet' : green.commit.slice(0, 8)}`;
  const blocked = green.blocked !== null;
  return { state, color: green.redNow ? 'red' : green.lastSnapshot === null ? 'gray' : 'green', rest, blocked, width: 3 + state.length + rest.length + (blocked ? 8 : 0) };
}

function MainHealth({ health }: { readonly health: MainHealthParts }) {
  return (
    <Text>
      {' · '}
      <Text color={health.color} bold={health.color === 'red'}>
        {health.state}
      </Text>
      {health.rest}
      {health.blocked ? <Text color="magenta"> blocked</Text> : null}
    </Text>
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
