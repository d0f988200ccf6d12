import { priceKey } from './prices.js';
import { parseModelSpec } from './model-spec.js';

/** Input tokens a model accepts in one request, by model key (`provider:model`, or `sim`). */
export type ContextWindowTable = Readonly<Record<string, number>>;

/**
 * Windows we are sure of, as the providers serve them. `--context-window` overrides any of
 * them, or all at once; a model missing here gets DEFAULT_CONTEXT_WINDOW. A model served with a
 * smaller window than listed (a local server started with 32k) needs `--context-window`; short
 * of that, the agent loop learns the real window the first time the provider refuses a request.
 */
export const KNOWN_CONTEXT_WINDOWS: ContextWindowTable = {
  'anthropic:claude-opus-4-5': 200_000,
  'anthropic:claude-sonnet-4-5': 200_000,
  'anthropic:claude-haiku-4-5': 200_000,
  'openai:gpt-5': 400_000,
  'openai:gpt-5.1': 400_000,
  'openai:gpt-5.2': 400_000,
  'openai:gpt-5-mini': 400_000,
  'openai:gpt-4.1': 1_047_576,
  'openai-compatible:qwen3-coder': 262_144,
  // The simulated model takes any size unless its spec sets `context=N`; a large model's window
  // keeps compaction realistic rather than never.
  sim: 200_000,
};

/** The window of a model the table does not know. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** The smallest window colony accepts: below it a system prompt and a task hardly fit. */
export const MIN_CONTEXT_WINDOW = 2_000;

const DATE_SUFFIX = /-(\d{8}|\d{4}-\d{2}-\d{2})$/;

/** What the user said with `--context-window`: one size for every model, and sizes by model key. */
export interface ContextWindowOverrides {
  readonly all: number | null;
  readonly byModel: ContextWindowTable;
}

export const NO_CONTEXT_WINDOW_OVERRIDES: ContextWindowOverrides = { all: null, byModel: {} };

/**
 * The context window of the model a spec names: the user's size for every model, else the
 * user's size for this model, else a sim's own `context=N`, else the known table, else the
 * default. Dated snapshots (`claude-sonnet-4-5-20250929`) have their model's window.
 */
export function contextWindowFor(spec: string, overrides: ContextWindowOverrides = NO_CONTEXT_WINDOW_OVERRIDES): number {
  if (overrides.all !== null) return overrides.all;
  const parsed = parseModelSpec(spec);
  if (parsed === null) return DEFAULT_CONTEXT_WINDOW;
  const { provider, modelId } = parsed;
  const exact = priceKey(provider, modelId);
  const undated = priceKey(provider, modelId.replace(DATE_SUFFIX, ''));
  const own = overrides.byModel[exact] ?? overrides.byModel[undated];
  if (own !== undefined) return own;
  const simContext = provider === 'sim' ? parsed.options.get('context') : null;
  if (simContext !== null && /^\d+$/.test(simContext)) return Number(simContext);
  return KNOWN_CONTEXT_WINDOWS[exact] ?? KNOWN_CONTEXT_WINDOWS[undated] ?? DEFAULT_CONTEXT_WINDOW;
}

export type ContextWindowParse = { readonly ok: true; readonly overrides: ContextWindowOverrides } | { readonly ok: false; readonly error: string };

const HELP = 'Give a number of tokens for every model (--context-window 32000) or sizes by model (--context-window openai:gpt-5=400000,sim=32000).';

/** Reads `--context-window`: `TOKENS`, or `model=TOKENS` pairs separated by commas. */
export function parseContextWindowOption(text: string): ContextWindowParse {
  const value = text.trim();
  if (/^\d+$/.test(value)) {
    const tokens = Number(value);
    if (tokens < MIN_CONTEXT_WINDOW) return { ok: false, error: `--context-window ${value} is too small: at least ${MIN_CONTEXT_WINDOW} tokens. ${HELP}` };
    return { ok: true, overrides: { all: tokens, byModel: {} } };
  }
  const byModel: Record<string, number> = {};
  for (const pair of value.split(',').map((part) => part.trim())) {
    const equals = pair.lastIndexOf('=');
    const key = equals === -1 ? '' : pair.slice(0, equals).trim();
    const size = equals === -1 ? '' : pair.slice(equals + 1).trim();
    if (!/^[a-z][a-z0-9-]*(:[^?\s=]+)?$/.test(key) || !/^\d+$/.test(size)) {
      return { ok: false, error: `--context-window "${text}" is not understood at "${pair}". ${HELP}` };
    }
    if (Number(size) < MIN_CONTEXT_WINDOW) return { ok: false, error: `--context-window gives ${key} ${size} tokens: at least ${MIN_CONTEXT_WINDOW}. ${HELP}` };
    byModel[key] = Number(size);
  }
  return { ok: true, overrides: { all: null, byModel } };
}
