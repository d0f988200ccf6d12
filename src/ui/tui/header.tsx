import { Box, Text } from 'ink';
import { cacheShare } from '../../observe/status/format-run-status.js';
import type { GreenStatus } from '../../observe/status/types.js';
import type { RunView } from '../../observe/view/run-view.js';
import { dollars, fit, shortDuration, shortNumber } from './figures.js';
import { perMinute, rateFigure, sparkline } from './sparkline.js';
import { roughDuration, taskProgress } from './time-left.js';
import { usePaint } from './colors.js';

export interface HeaderProps {
  readonly view: RunView;
  readonly width: number;
  /** What the source adds to the first line: "live", "replay 4x paused", "reading the log 40%". */
  readonly mode: string;
  /** Whether the agent list leaves ended agents out (the `f` key); the agents line says so. */
  readonly hideEnded?: boolean;
}

/** The lines the header takes, its rule included. */
export const HEADER_LINES = 5;
/** Each sparkline is as wide as the line leaves, between these. */
const SPARK_MIN = 4;
const SPARK_MAX = 20;
/** The run's title gets what the first line leaves, between these. */
const TITLE_MIN = 8;
const TITLE_MAX = 40;

/**
 * The run in four lines: what it is and how it stands (main's health too); agents, workers and
 * spending; tasks closed out of all with the time left, commits and the trouble met; and
 * throughput per minute, each sparkline with its rate as a figure.
 */
export function Header({ view, width, mode, hideEnded = false }: HeaderProps) {
  const paint = usePaint();
  const { status } = view;
  const agents = view.agents;
  const count = (state: string) => agents.filter((agent) => agent.state === state).length;
  const workersAtWork = agents.filter((agent) => agent.role === 'worker' && agent.endedAt === null).length;
  // The run's own limit, and each working host's: workers run in every process of the run.
  const hostWorkers = status.hosts.filter((host) => host.state === 'working').reduce((sum, host) => sum + host.workers, 0);
  const limit = status.workers === null ? '' : `/${status.workers + hostWorkers}`;
  const ended = agents.filter((agent) => agent.endedAt !== null).length;
  const cost = `${dollars(status.costUsd)}${status.costKnown ? '' : '+'}`;
  const cached = status.tokens.cachedInput === 0 ? '' : ` (${cacheShare(status)} cached)`;
  // What needs the user now, in red on the first line: their hold, and moves of the trunk by others that took landed work off it.
  const rewrites = status.trunkRewrites.length;
  const alerts = [
    ...(status.userAndon === null ? [] : [`PAUSED (andon): ${status.userAndon.reason}`]),
    ...(rewrites === 0 ? [] : [`TRUNK REWRITTEN by someone else (${rewrites})`]),
    ...(status.setup?.state === 'failed' ? ['SETUP FAILED: see colony status'] : []),
  ];
  const andon = alerts.length === 0 ? null : alerts.join(' · ');
  const now = status.run.startedAt + status.run.durationMs;
  // While the setup installs, no agent has started: the second line says what runs instead.
  const setup = status.setup?.state === 'installing' ? `setting up: ${status.setup.command ?? ''}${status.setup.registry === null ? '' : ` from ${status.setup.registry}`} · ${shortDuration(now - (status.setup.startedAt ?? now))}` : null;
  const first = `colony ${status.run.id} ${status.run.state} ${shortDuration(status.run.durationMs)} ·  · ${mode}`;
  const andonWidth = andon === null ? 0 : andon.length + 3;
  const health = status.green === null ? null : mainHealthOf(status.green, now, width - first.length - TITLE_MIN - andonWidth);
  const room = width - first.length - andonWidth - (health === null ? 0 : health.width);
  // A line too narrow for even a few letters of the title leaves it out, and then the word
  // colony: the run's id names the run, and main's health is not cut.
  const title = room < Math.min(TITLE_MIN, status.run.title.length) ? null : fit(status.run.title, Math.max(TITLE_MIN, Math.min(TITLE_MAX, room)));
  const named = title !== null || room + 3 >= 0;
  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        {named ? <Text bold>colony </Text> : null}
        {status.run.id} <Text {...paint(stateColor(status.run.state))}>{status.run.state}</Text> {shortDuration(status.run.durationMs)} · {title === null ? '' : `${title} · `}
        {mode}
        {health === null ? null : <MainHealth health={health} />}
        {andon === null ? '' : ' · '}
        {andon === null ? null : <Text {...paint('red')} bold>{andon}</Text>}
      </Text>
      {setup === null ? (
        <Text wrap="truncate">
          agents {agents.length}: {count('running')} running {count('waiting')} waiting {ended} ended{hideEnded ? ' (hidden)' : ''} · workers {workersAtWork}
          {limit}
          {hostsAtWork(status.hosts)} · {shortNumber(status.tokens.total)} tok{cached} {cost}
        </Text>
      ) : (
        <Text wrap="truncate" {...paint('yellow')}>
          {setup}
        </Text>
      )}
      <Text wrap="truncate">{tasksLine(view, now, width)}</Text>
      <Text wrap="truncate">{throughputLine(view, now, width)}</Text>
      <Text dimColor>{'─'.repeat(Math.max(0, width))}</Text>
    </Box>
  );
}

/** ` · hosts 2/3`: the worker hosts working of those that joined; nothing for a run on one machine. */
function hostsAtWork(hosts: RunView['status']['hosts']): string {
  if (hosts.length === 0) return '';
  return ` · hosts ${hosts.filter((host) => host.state === 'working').length}/${hosts.length}`;
}

/**
 * `tasks 9/12 closed 75% ~1m left · 1 open 2 running 9 done · commits 9 · retries 0 conflicts 1 failures 0`.
 * Where the line would not fit, the trouble counts that are zero are left out.
 */
export function tasksLine(view: RunView, now: number, width: number): string {
  const { status } = view;
  const closedAt = view.tasks.flatMap((task) => (task.parentTaskId !== null && task.closedAt !== null ? [task.closedAt] : []));
  const progress = taskProgress({ closedAt, total: status.tasks.total, now, startedAt: status.run.startedAt, running: status.run.endedAt === null });
  const left = progress.leftMs === null ? '' : ` ${roughDuration(progress.leftMs)} left`;
  const byStatus = Object.entries(status.tasks.byStatus)
    .filter(([, tasks]) => tasks > 0)
    .map(([name, tasks]) => `${tasks} ${name}`)
    .join(' ');
  const tasks = `${progress.total === 0 ? 'tasks none yet' : `tasks ${progress.closed}/${progress.total} closed ${Math.floor(progress.share * 100)}%${left} · ${byStatus}`} · commits ${status.commits.landed}`;
  const errors = view.errors.counts;
  const trouble: [string, number][] = [
    ['retries', errors['model-retry']],
    ['conflicts', errors['merge-conflict']],
    ['failures', errors['agent-failure'] + errors.hung],
  ];
  const all = `${tasks} · ${trouble.map(([name, times]) => `${name} ${times}`).join(' ')}`;
  if (all.length <= width) return all;
  const some = trouble.filter(([, times]) => times > 0).map(([name, times]) => `${name} ${times}`);
  return some.length === 0 ? tasks : `${tasks} · ${some.join(' ')}`;
}

/** `commits/min ▁▃█▅ 3  tools/min ▂▅█▇ 40  tokens/min ▂▆█▇ 12k`: the sparklines share what the figures leave. */
export function throughputLine(view: RunView, now: number, width: number): string {
  const series = [
    { label: 'commits/min', values: view.throughput.map((point) => ({ start: point.start, value: point.commits })) },
    { label: 'tools/min', values: view.throughput.map((point) => ({ start: point.start, value: point.toolCalls })) },
    { label: 'tokens/min', values: view.throughput.map((point) => ({ start: point.start, value: point.tokens })) },
  ].map((entry) => ({ ...entry, figure: rateFigure(perMinute(entry.values, now, view.status.run.startedAt)) }));
  // Each series takes its label, a space, its bars, a space and its figure; two spaces between series.
  const words = series.reduce((sum, entry) => sum + entry.label.length + entry.figure.length + 2, 0) + 2 * (series.length - 1);
  const bars = Math.max(SPARK_MIN, Math.min(SPARK_MAX, Math.floor((width - words) / series.length)));
  return series.map((entry) => `${entry.label} ${sparkline(entry.values.map((point) => point.value), bars)} ${entry.figure}`).join('  ');
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
 * cannot move. Where `room` is short, the green branch and then the share of time red are left
 * out, whole.
 */
function mainHealthOf(green: GreenStatus, now: number, room: number): MainHealthParts {
  const state = green.redNow ? `main RED ${shortDuration(now - (green.since ?? now))}` : green.lastSnapshot === null ? 'main unchecked' : 'main ok';
  const share = ` · ${Math.round(green.redShare * 100)}% red`;
  const blocked = green.blocked !== null;
  const fixed = 3 + state.length + (blocked ? 8 : 0);
  const wordings = [`${share} · green ${green.commit === null ? 'none yet' : green.commit.slice(0, 8)}`, share, ''];
  const rest = wordings.find((wording) => fixed + wording.length <= room) ?? '';
  return { state, color: green.redNow ? 'red' : green.lastSnapshot === null ? 'gray' : 'green', rest, blocked, width: fixed + rest.length };
}

function MainHealth({ health }: { readonly health: MainHealthParts }) {
  const paint = usePaint();
  return (
    <Text>
      {' · '}
      <Text {...paint(health.color)} bold={health.color === 'red'}>
        {health.state}
      </Text>
      {health.rest}
      {health.blocked ? <Text {...paint('magenta')}> blocked</Text> : null}
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
