import { priceKey } from './prices.js';
import { parseModelSpec, type ParsedSpec } from './model-spec.js';

/** Tokens by model key (`provider:model`, or `sim`). */
export type TokenTable = Readonly<Record<string, number>>;

/** What one request to a model may hold, in tokens. */
export interface ModelLimits {
  /** The context window: the request's input and the output it asks for, together. */
  readonly window: number;
  /** The most output tokens one answer may have; a request asking for more is refused. */
  readonly output: number;
}

/**
 * Limits we are sure of, as the providers publish and serve them. `--context-window` and
 * `--max-output-tokens` override any of them, or all at once; a model missing here gets
 * DEFAULT_CONTEXT_WINDOW and DEFAULT_OUTPUT_LIMIT. A model served with a smaller window than
 * listed (a local server started with 32k) needs `--context-window`; short of that, the agent
 * loop learns the real window the first time the provider refuses a request.
 */
export const KNOWN_MODEL_LIMITS: Readonly<Record<string, ModelLimits>> = {
  'anthropic:claude-opus-4-5': { window: 200_000, output: 64_000 },
  'anthropic:claude-sonnet-4-5': { window: 200_000, output: 64_000 },
  'anthropic:claude-haiku-4-5': { window: 200_000, output: 64_000 },
  'openai:gpt-5': { window: 400_000, output: 128_000 },
  'openai:gpt-5.1': { window: 400_000, output: 128_000 },
  'openai:gpt-5.2': { window: 400_000, output: 128_000 },
  'openai:gpt-5-mini': { window: 400_000, output: 128_000 },
  'openai:gpt-4.1': { window: 1_047_576, output: 32_768 },
  // Qwen's recommended output length; a server may be started with less.
  'openai-compatible:qwen3-coder': { window: 262_144, output: 65_536 },
  // The simulated model takes any size unless its spec sets `context=N`; a large model's limits
  // keep compaction realistic rather than never. It stops its answer at the output asked for.
  sim: { window: 200_000, output: 64_000 },
};

/** The window of a model the table does not know. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

/**
 * The output limit of a model the table does not know: modest, since a provider refuses a
 * request that asks for more than its model writes (16,384 is gpt-4o's), while an answer cut at
 * a lower limit only costs the agent another answer.
 */
export const DEFAULT_OUTPUT_LIMIT = 16_384;

/** The smallest window colony accepts: below it a system prompt and a task hardly fit. */
export const MIN_CONTEXT_WINDOW = 2_000;

/** The smallest output limit colony accepts: below it an answer hardly holds one tool call. */
export const MIN_OUTPUT_LIMIT = 500;

const DATE_SUFFIX = /-(\d{8}|\d{4}-\d{2}-\d{2})$/;

/** What the user said with `--context-window` or `--max-output-tokens`: one size for every model, and sizes by model key. */
export interface TokenOverrides {
  readonly all: number | null;
  readonly byModel: TokenTable;
}

export const NO_TOKEN_OVERRIDES: TokenOverrides = { all: null, byModel: {} };

/**
 * The context window of the model a spec names: the user's size for every model, else the
 * user's size for this model, else a sim's own `context=N`, else the known table, else the
 * default. Dated snapshots (`claude-sonnet-4-5-20250929`) have their model's window.
 */
export function contextWindowFor(spec: string, overrides: TokenOverrides = NO_TOKEN_OVERRIDES): number {
  return limitFor(spec, overrides, (parsed, known) => simContext(parsed) ?? known?.window ?? DEFAULT_CONTEXT_WINDOW);
}

/**
 * The output limit of the model a spec names, looked up as its window is: the user's size for
 * every model, else for this model, else the known table, else the default.
 */
export function outputLimitFor(spec: string, overrides: TokenOverrides = NO_TOKEN_OVERRIDES): number {
  return limitFor(spec, overrides, (_parsed, known) => known?.output ?? DEFAULT_OUTPUT_LIMIT);
}

function limitFor(spec: string, overrides: TokenOverrides, fromModel: (parsed: ParsedSpec | null, known: ModelLimits | undefined) => number): number {
  if (overrides.all !== null) return overrides.all;
  const parsed = parseModelSpec(spec);
  if (parsed === null) return fromModel(null, undefined);
  const { provider, modelId } = parsed;
  const exact = priceKey(provider, modelId);
  const undated = priceKey(provider, modelId.replace(DATE_SUFFIX, ''));
  const own = overrides.byModel[exact] ?? overrides.byModel[undated];
  if (own !== undefined) return own;
  return fromModel(parsed, KNOWN_MODEL_LIMITS[exact] ?? KNOWN_MODEL_LIMITS[undated]);
}

function simContext(parsed: ParsedSpec | null): number | null {
  const context = parsed?.provider === 'sim' ? parsed.options.get('context') : null;
  return context !== null && context !== undefined && /^\d+$/.test(context) ? Number(context) : null;
}

export type TokenOverridesParse = { readonly ok: true; readonly overrides: TokenOverrides } | { readonly ok: false; readonly error: string };

/** Reads `--context-window`: `TOKENS`, or `model=TOKENS` pairs separated by commas. */
export function parseContextWindowOption(text: string): TokenOverridesParse {
  return parseTokensByModel(text, {
    flag: '--context-window',
    minimum: MIN_CONTEXT_WINDOW,
    help: 'Give a number of tokens for every model (--context-window 32000) or sizes by model (--context-window openai:gpt-5=400000,sim=32000).',
  });
}

/** Reads `--max-output-tokens`: `TOKENS`, or `model=TOKENS` pairs separated by commas. */
export function parseOutputLimitOption(text: string): TokenOverridesParse {
  return parseTokensByModel(text, {
    flag: '--max-output-tokens',
    minimum: MIN_OUTPUT_LIMIT,
    help: 'Give a number of tokens for every model (--max-output-tokens 16000) or limits by model (--max-output-tokens openai-compatible:qwen3-coder=32000,sim=4000).',
  });
}

interface TokensFlag {
  readonly flag: string;
  readonly minimum: number;
  readonly help: string;
}

function parseTokensByModel(text: string, { flag, minimum, help }: TokensFlag): TokenOverridesParse {
  const value = text.trim();
  if (/^\d+$/.test(value)) {
    const tokens = Number(value);
    if (tokens < minimum) return { ok: false, error: `${flag} ${value} is too small: at least ${minimum} tokens. ${help}` };
    return { ok: true, overrides: { all: tokens, byModel: {} } };
  }
  const byModel: Record<string, number> = {};
  for (const pair of value.split(',').map((part) => part.trim())) {
    const equals = pair.lastIndexOf('=');
    const key = equals === -1 ? '' : pair.slice(0, equals).trim();
    const size = equals === -1 ? '' : pair.slice(equals + 1).trim();
    if (!/^[a-z][a-z0-9-]*(:[^?\s=]+)?$/.test(key) || !/^\d+$/.test(size)) {
      return { ok: false, error: `${flag} "${text}" is not understood at "${pair}". ${help}` };
    }
    if (Number(size) < minimum) return { ok: false, error: `${flag} gives ${key} ${size} tokens: at least ${minimum}. ${help}` };
    byModel[key] = Number(size);
  }
  return { ok: true, overrides: { all: null, byModel } };
}
