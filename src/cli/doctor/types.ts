/**
 * One line of `colony doctor`: a check's name, how it went, what it found, and for a failure
 * (or a warning with a remedy) the fix in one line: what to install or change, the command
 * where there is one.
 */
export type DoctorCheck =
  | { readonly name: string; readonly status: 'pass'; readonly detail: string; readonly tokens?: TokensSpent }
  | { readonly name: string; readonly status: 'warn'; readonly detail: string; readonly fix?: string; readonly tokens?: TokensSpent }
  | { readonly name: string; readonly status: 'fail'; readonly detail: string; readonly fix: string; readonly tokens?: TokensSpent };

export type DoctorStatus = DoctorCheck['status'];

/** What a model check's one request cost; a models listing costs none. */
export interface TokensSpent {
  readonly input: number;
  readonly output: number;
}

/** Every check of one `colony doctor`, in the order they are printed. */
export interface DoctorReport {
  readonly checks: readonly DoctorCheck[];
  /** True when no check failed: colony can run here (warnings say what it runs without). */
  readonly ok: boolean;
}

/**
 * One model to check, with what reaching it takes: the spec and, when it is not the
 * provider's default, the address and the variable holding the key. The CLI makes these from
 * `--model`, `--planner-model`, `--base-url` and `--api-key-env`; a settings file can as well.
 */
export interface ModelToCheck {
  readonly spec: string;
  /** Who uses it, named in the line: `workers`, `planners`. */
  readonly roles: readonly string[];
  readonly baseUrl?: string | undefined;
  readonly apiKeyEnv?: string | undefined;
}

export interface ModelCheckOptions {
  /** Where API keys are read from; a key is never printed. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly fetch?: typeof globalThis.fetch | undefined;
  /** How long the one request may take; 20 s by default. */
  readonly timeoutMs?: number | undefined;
}

export const MODEL_CHECK_TIMEOUT_MS = 20_000;

/** The line's name: `model openai:gpt-5.2 (workers, planners)`. */
export function modelCheckName(model: ModelToCheck): string {
  return `model ${model.spec} (${model.roles.join(', ')})`;
}

export function pass(name: string, detail: string, tokens?: TokensSpent): DoctorCheck {
  return { name, status: 'pass', detail, ...(tokens === undefined ? {} : { tokens }) };
}

export function warn(name: string, detail: string, fix?: string, tokens?: TokensSpent): DoctorCheck {
  return { name, status: 'warn', detail, ...(fix === undefined ? {} : { fix }), ...(tokens === undefined ? {} : { tokens }) };
}

export function fail(name: string, detail: string, fix: string, tokens?: TokensSpent): DoctorCheck {
  return { name, status: 'fail', detail, fix, ...(tokens === undefined ? {} : { tokens }) };
}
