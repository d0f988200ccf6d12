import { InvalidArgumentError, type Command } from 'commander';
import { parseContextWindowOption, parseOutputLimitOption, type TokenOverrides, type TokenOverridesParse } from '../model/context-windows.js';
import { DEFAULT_FRESHNESS, type RunSettingsInput, type StepsByKind } from '../events/run-settings.js';

/** The flags of `colony run` that keep agents fresh over a long run. */
export interface FreshnessFlags {
  readonly contextWindow?: TokenOverrides;
  readonly maxOutputTokens?: TokenOverrides;
  readonly compactAt?: number;
  /** False with `--no-compaction`. */
  readonly compaction: boolean;
  readonly reflectEvery?: StepsByKind;
  readonly scratchpadEvery?: StepsByKind;
}

export function addFreshnessOptions(command: Command): Command {
  const { reflectEvery, scratchpadEvery } = DEFAULT_FRESHNESS;
  return command
    .option(
      '--context-window <tokens>',
      "override the models' context windows: a number of tokens for every model, or model=tokens pairs (openai:gpt-5=400000,sim=32000)",
      tokensByModel(parseContextWindowOption),
    )
    .option(
      '--max-output-tokens <tokens>',
      "override the models' output limits, the most tokens one answer may have: a number for every model, or model=tokens pairs (openai-compatible:qwen3-coder=32000,sim=4000)",
      tokensByModel(parseOutputLimitOption),
    )
    .option('--compact-at <percent>', 'summarise a conversation when it reaches this share of its context window', percent, Math.round(DEFAULT_FRESHNESS.threshold * 100))
    .option('--no-compaction', 'never summarise conversations (a long-running agent may then outgrow its context window and fail)')
    .option('--reflect-every <steps>', `remind agents to check their work against their goal every N steps: N, planner=N,worker=M, or off (default planner=${String(reflectEvery.planner)},worker=${String(reflectEvery.worker)})`, stepsByKind('--reflect-every'))
    .option(
      '--scratchpad-every <steps>',
      `remind an agent that has not rewritten its scratchpad for N steps: N, planner=N,worker=M, or off (default planner=${String(scratchpadEvery.planner)},worker=${String(scratchpadEvery.worker)})`,
      stepsByKind('--scratchpad-every'),
    );
}

/** The freshness settings the flags ask for; what they leave out takes the run settings' default. */
export function freshnessOf(flags: FreshnessFlags): RunSettingsInput['freshness'] {
  return {
    contextWindows: flags.contextWindow,
    outputLimits: flags.maxOutputTokens,
    threshold: flags.compactAt === undefined ? undefined : flags.compactAt / 100,
    compaction: flags.compaction,
    reflectEvery: flags.reflectEvery,
    scratchpadEvery: flags.scratchpadEvery,
  };
}

function tokensByModel(parse: (text: string) => TokenOverridesParse): (value: string) => TokenOverrides {
  return (value) => {
    const parsed = parse(value);
    if (!parsed.ok) throw new InvalidArgumentError(parsed.error);
    return parsed.overrides;
  };
}

function percent(value: string): number {
  const number = Number(value.trim().replace(/%$/, ''));
  if (!Number.isFinite(number) || number < 10 || number > 100) {
    throw new InvalidArgumentError(`--compact-at takes a percentage from 10 to 100, such as 80, got "${value}".`);
  }
  return number;
}

/** `N`, `off`, or `planner=N,worker=M` (either may be left out and keeps its default, or be `off`). */
function stepsByKind(flag: string): (value: string) => StepsByKind {
  const help = `${flag} takes a number of steps (20), off, or one per kind (planner=40,worker=25; a kind may be off)`;
  const steps = (text: string): number | null => {
    if (text === 'off') return null;
    if (!/^\d+$/.test(text) || Number(text) < 1) throw new InvalidArgumentError(`${help}, got "${text}".`);
    return Number(text);
  };
  return (value) => {
    const text = value.trim();
    if (!text.includes('=')) {
      const all = steps(text);
      return { planner: all, worker: all };
    }
    const defaults = flag === '--reflect-every' ? DEFAULT_FRESHNESS.reflectEvery : DEFAULT_FRESHNESS.scratchpadEvery;
    const result = { ...defaults };
    for (const pair of text.split(',')) {
      const [kind, given, ...rest] = pair.split('=').map((part) => part.trim());
      if ((kind !== 'planner' && kind !== 'worker') || given === undefined || rest.length > 0) throw new InvalidArgumentError(`${help}, got "${value}".`);
      result[kind] = steps(given);
    }
    return result;
  };
}
