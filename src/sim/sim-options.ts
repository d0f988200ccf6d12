/**
 * The knobs of the simulated model, read from its model spec: `sim` or
 * `sim?seed=7&latency=50..400&bug=0.2&lie=0.1&malformed=0.05&crash=0.02&tokens=200&context=32000&skiptests=0.5`.
 */
export interface SimOptions {
  /** Every roll is derived from this, so the same seed gives the same run. */
  readonly seed: number;
  /** Milliseconds per call, drawn between min and max (both included). */
  readonly latencyMs: { readonly min: number; readonly max: number };
  /** Chance per module that the first attempt is wrong and fails its test. */
  readonly bug: number;
  /**
   * Chance per task that a worker whose first attempt fails its tests skips the fix, merges
   * anyway and hands off `done` with made-up evidence: a false claim, for acceptance checks to
   * catch. A retried task (its brief carries earlier attempts) never lies.
   */
  readonly lie: number;
  /** Chance per turn of one malformed tool call instead of the intended one. */
  readonly malformed: number;
  /** Chance per turn (after the first) of abandoning the task. */
  readonly crash: number;
  /** Extra output tokens reported per call, to make usage look like a real model's. */
  readonly tokens: number;
  /**
   * Chance per worker call (after the first) that the provider never answers: the call hangs
   * until it is aborted, as a stuck connection would. Seeded by the conversation, so a call
   * that hangs hangs again when retried.
   */
  readonly stall: number;
  /**
   * The context window in tokens, or null for none: a request whose input is larger (input
   * tokens counted as the sim reports them, a quarter of the conversation's characters) is
   * refused as a real provider refuses it, with a 400 `context_length_exceeded`.
   */
  readonly context: number | null;
  /**
   * Chance per module that the planner tells its Build task to merge without running the tests
   * (and gives it no acceptance checks), leaving main's green check to find what it broke. The
   * worker obeys on a first attempt; a retry or a fix task always runs the tests.
   */
  readonly skiptests: number;
  /**
   * Chance per task that the worker hands off `done` without merging its work, as real models
   * do: colony refuses that handoff once (`Not landed:`), and the worker merges, then hands off again.
   */
  readonly unmerged: number;
  /**
   * Chance per task that the planner gives it the project's whole suite to run and check, as
   * real models do, where it would give the tests that cover the task (a project of more than a
   * few modules): how runs went before planners scoped tests, for measuring what scoping saves.
   */
  readonly wholesuite: number;
  /**
   * Chance per task that the worker writes a summary of its work into the repository
   * (`TASK_SUMMARY.md`) before it merges, as real models do: colony refuses that merge once
   * (`Not merged:`), and the worker deletes the file and merges again.
   */
  readonly notes: number;
  /**
   * Chance per failed first attempt of a module that the planner publishes the task's brief
   * again as it was, without `retry_of`, as real models do: colony refuses that once
   * (`Not published:`), and the planner retries the task with `retry_of`.
   */
  readonly republish: number;
  /**
   * Chance per task that the worker, its own work passing, skips another module's failing tests
   * where they stand (`test.skip`) so that the suite passes, as real models do: colony refuses
   * that merge once (`Not merged (tests outside your task):`), and the worker puts the tests back
   * and merges its own work, naming the failures as not its own.
   */
  readonly testfix: number;
  /**
   * Chance per module that uses others (`uses` in its spec) that the planner publishes its first
   * task at once, before they landed, as real models publish every task they know of: the worker
   * finds them missing and hands off blocked, as colony's protocol says, and the planner retries
   * the task once they landed.
   */
  readonly dependent: number;
}

/** The smallest context window the sim takes: below it not even a brief would fit. */
export const MIN_CONTEXT_TOKENS = 1_000;

export const DEFAULT_SIM_OPTIONS: SimOptions = {
  seed: 1,
  latencyMs: { min: 0, max: 0 },
  bug: 0,
  lie: 0,
  malformed: 0,
  crash: 0,
  tokens: 0,
  stall: 0,
  context: null,
  skiptests: 0,
  unmerged: 0,
  wholesuite: 0,
  notes: 0,
  republish: 0,
  testfix: 0,
  dependent: 0,
};

export type SimSpecResult = { readonly ok: true; readonly options: SimOptions } | { readonly ok: false; readonly error: string };

const ACCEPTED_KEYS = [
  'seed (an integer, default 1)',
  'latency (milliseconds: N or A..B, default 0)',
  'bug (a probability 0..1, default 0)',
  'lie (a probability 0..1 that a worker whose first attempt fails its tests merges anyway and claims done, default 0)',
  'malformed (a probability 0..1, default 0)',
  'crash (a probability 0..1, default 0)',
  'tokens (extra output tokens per call, an integer >= 0, default 0)',
  'stall (a probability 0..1 that a worker call never answers, default 0)',
  `context (the context window in tokens, an integer >= ${MIN_CONTEXT_TOKENS}; larger requests are refused; default none)`,
  'skiptests (a probability 0..1 that a planner tells a Build task to merge without running the tests, default 0)',
  'unmerged (a probability 0..1 that a worker hands off done before merging its work, default 0)',
  "wholesuite (a probability 0..1 that a planner gives a task the project's whole suite rather than the tests that cover it, default 0)",
  'notes (a probability 0..1 that a worker writes a summary file into the repository before it merges, default 0)',
  'republish (a probability 0..1 that a planner publishes a failed task again as it was, without retry_of, default 0)',
  "testfix (a probability 0..1 that a worker skips other modules' failing tests so that the suite passes, default 0)",
  'dependent (a probability 0..1 that a planner publishes a module before the modules it uses landed, default 0)',
];

const HELP = `Accepted keys: ${ACCEPTED_KEYS.join('; ')}. Example: sim?seed=7&latency=50..400&bug=0.2&malformed=0.05&crash=0.02&context=32000`;

type Setting = { ok: true; apply: (options: SimOptions) => SimOptions } | { ok: false; error: string };

/** Reads a sim model spec. Anything it does not understand is an error that lists what it accepts. */
export function parseSimSpec(spec: string): SimSpecResult {
  const [name, query, ...rest] = spec.trim().split('?');
  if (name !== 'sim' || rest.length > 0) {
    return { ok: false, error: `"${spec}" is not a sim spec: expected "sim" or "sim?key=value&...". ${HELP}` };
  }
  let options = DEFAULT_SIM_OPTIONS;
  const seen = new Set<string>();
  for (const pair of (query ?? '').split('&').filter((part) => part.length > 0)) {
    const equals = pair.indexOf('=');
    const key = equals === -1 ? pair : pair.slice(0, equals);
    const value = equals === -1 ? '' : pair.slice(equals + 1);
    if (seen.has(key)) return { ok: false, error: `The sim spec "${spec}" sets ${key} twice. ${HELP}` };
    seen.add(key);
    const setting = readSetting(key, value);
    if (!setting.ok) return { ok: false, error: `In the sim spec "${spec}": ${setting.error} ${HELP}` };
    options = setting.apply(options);
  }
  return { ok: true, options };
}

function readSetting(key: string, value: string): Setting {
  switch (key) {
    case 'seed': {
      const seed = readInteger(value);
      if (seed === null) return { ok: false, error: `seed must be an integer, got "${value}".` };
      return { ok: true, apply: (options) => ({ ...options, seed }) };
    }
    case 'latency': {
      const latency = readLatency(value);
      if (latency === null) {
        return { ok: false, error: `latency must be milliseconds as N or A..B with 0 <= A <= B, got "${value}".` };
      }
      return { ok: true, apply: (options) => ({ ...options, latencyMs: latency }) };
    }
    case 'bug':
    case 'lie':
    case 'malformed':
    case 'crash':
    case 'stall':
    case 'skiptests':
    case 'unmerged':
    case 'wholesuite':
    case 'notes':
    case 'republish':
    case 'testfix':
    case 'dependent': {
      const chance = readProbability(value);
      if (chance === null) return { ok: false, error: `${key} must be a probability from 0 to 1, got "${value}".` };
      return { ok: true, apply: (options) => ({ ...options, [key]: chance }) };
    }
    case 'tokens': {
      const tokens = readInteger(value);
      if (tokens === null || tokens < 0) return { ok: false, error: `tokens must be an integer >= 0, got "${value}".` };
      return { ok: true, apply: (options) => ({ ...options, tokens }) };
    }
    case 'context': {
      const context = readInteger(value);
      if (context === null || context < MIN_CONTEXT_TOKENS) {
        return { ok: false, error: `context must be a number of tokens, an integer >= ${MIN_CONTEXT_TOKENS}, got "${value}".` };
      }
      return { ok: true, apply: (options) => ({ ...options, context }) };
    }
    default:
      return { ok: false, error: `unknown key "${key}".` };
  }
}

function readInteger(value: string): number | null {
  if (!/^-?\d+$/.test(value)) return null;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : null;
}

function readProbability(value: string): number | null {
  if (!/^\d*\.?\d+$/.test(value)) return null;
  const number = Number(value);
  return number >= 0 && number <= 1 ? number : null;
}

function readLatency(value: string): { min: number; max: number } | null {
  const parts = value.split('..');
  if (parts.length > 2) return null;
  const bounds = parts.map(readInteger);
  const min = bounds[0];
  const max = bounds.length === 2 ? bounds[1] : min;
  if (min === null || min === undefined || max === null || max === undefined) return null;
  if (min < 0 || max < min) return null;
  return { min, max };
}
