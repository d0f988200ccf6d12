import { APICallError } from '@ai-sdk/provider';
import type { ModelError } from '../../model/chat-model.js';
import { parseModelSpec } from '../../model/model-spec.js';
import { providerDefaults, resolveModel } from '../../model/registry.js';
import { refuseHtmlAnswers } from '../../model/resilience/html-answers.js';
import { createProviderGuards } from '../../model/resilience/provider-guard.js';
import { classifyError } from '../../model/resilience/retry.js';
import { problemAndFix } from './problem-and-fix.js';
import { fail, MODEL_CHECK_TIMEOUT_MS, modelCheckName, pass, warn, type DoctorCheck, type ModelCheckOptions, type ModelToCheck, type TokensSpent } from './types.js';

/** What the one request of a model check found. */
type Reached =
  | { readonly kind: 'listed'; readonly ids: readonly string[] }
  | { readonly kind: 'answered'; readonly tokens: TokensSpent }
  | { readonly kind: 'failed'; readonly error: ModelError; readonly tokens: TokensSpent };

const NO_TOKENS: TokensSpent = { input: 0, output: 0 };

/**
 * Checks one hosted model the way a run would reach it: the spec resolves, the key's variable
 * is set, and one cheap request is answered. The request is the provider's models listing,
 * which costs no tokens; where the address has none (a 404 or 405, or an answer that is not a
 * listing), a completion of at most one output token through the run's own model code. Every
 * failure is classified by the model layer (`classifyError`): refused key, unreachable address,
 * a web page instead of the API, a failing server.
 */
export async function reachModel(model: ModelToCheck, options: ModelCheckOptions): Promise<DoctorCheck> {
  const name = modelCheckName(model);
  const provider = parseModelSpec(model.spec)?.provider ?? '';
  const defaults = providerDefaults(provider);
  const keyEnv = model.apiKeyEnv ?? defaults?.apiKeyEnv ?? null;
  const key = keyEnv === null ? '' : (options.env[keyEnv]?.trim() ?? '');
  if (keyEnv !== null && key === '') {
    return fail(name, `no API key: the environment variable ${keyEnv} is not set or empty`, `export ${keyEnv}=<your key> before running colony, or pass --api-key-env NAME to read the key from another variable`);
  }
  const timeoutMs = options.timeoutMs ?? MODEL_CHECK_TIMEOUT_MS;
  const resolved = resolveModel(model.spec, {
    env: options.env,
    baseUrl: model.baseUrl,
    apiKeyEnv: model.apiKeyEnv,
    // One attempt: a check says what the first call meets; a run's retries are its own business.
    retry: { maxAttempts: 1, stallTimeoutMs: timeoutMs },
    providers: createProviderGuards(),
    fetch: options.fetch,
  });
  if (!resolved.ok) {
    const { problem, fix } = problemAndFix(resolved.error, 'check the spec against the forms the message lists');
    return fail(name, problem, fix);
  }
  const baseUrl = (model.baseUrl ?? defaults?.baseUrl ?? '').replace(/\/+$/, '');
  const fetch = refuseHtmlAnswers(options.fetch, baseUrl);
  const context = { apiKeyEnv: keyEnv ?? undefined };
  const modelId = parseModelSpec(model.spec)?.modelId ?? '';
  let reached = await listModels(fetch, baseUrl, provider, key, timeoutMs, context);
  if (reached === null) {
    const answer = await resolved.model.call(
      { messages: [{ role: 'user', content: 'Answer with one word: ready?' }], tools: [], maxOutputTokens: 1, toolChoice: 'none' },
      { signal: AbortSignal.timeout(timeoutMs) },
    );
    reached = answer.ok
      ? { kind: 'answered', tokens: { input: answer.turn.usage.inputTokens, output: answer.turn.usage.outputTokens } }
      : { kind: 'failed', error: answer.error, tokens: NO_TOKENS };
  }
  const where = `${baseUrl}${keyEnv === null ? '' : ` with the key in ${keyEnv}`}`;
  if (reached.kind === 'listed') {
    if (reached.ids.includes(modelId)) return pass(name, `${where}: the provider lists ${modelId} (a models listing, no tokens spent)`, NO_TOKENS);
    return warn(name, `${where}: the key is accepted, but the ${reached.ids.length} models the provider lists do not include ${modelId} (no tokens spent)`, `check the model's name in ${model.spec}: the provider's own names are in its models listing`, NO_TOKENS);
  }
  if (reached.kind === 'answered') {
    const spent = `${reached.tokens.input + reached.tokens.output} tokens spent (${reached.tokens.input} in, ${reached.tokens.output} out)`;
    return pass(name, `${where}: a one-token completion was answered, ${spent}`, reached.tokens);
  }
  const error = reached.error.kind === 'aborted' ? { ...reached.error, message: `The provider did not answer within ${timeoutMs / 1000} s.` } : reached.error;
  if (error.kind === 'rate-limit') return warn(name, `${where}: ${error.message}`, 'the key works; wait, or lower --workers so a run asks less at once', reached.tokens);
  return fail(name, `${where}: ${error.message}`, fixFor(error, model, keyEnv, baseUrl), reached.tokens);
}

/**
 * `GET <base>/models`, with the provider's own headers. Null when the address has no listing
 * (404 or 405) or answers with something that is not one: the completion decides then.
 */
async function listModels(
  fetch: typeof globalThis.fetch,
  baseUrl: string,
  provider: string,
  key: string,
  timeoutMs: number,
  context: { readonly apiKeyEnv: string | undefined },
): Promise<Reached | null> {
  const url = `${baseUrl}/models`;
  const headers: Record<string, string> =
    provider === 'anthropic' ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : key === '' ? {} : { authorization: `Bearer ${key}` };
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    return { kind: 'failed', error: classifyError(error, context), tokens: NO_TOKENS };
  }
  const body = await response.text().catch(() => '');
  if (response.status === 404 || response.status === 405) return null;
  if (!response.ok) {
    const failure = new APICallError({
      message: errorText(body) ?? (response.statusText || `HTTP ${response.status}`),
      url,
      requestBodyValues: {},
      statusCode: response.status,
      responseHeaders: Object.fromEntries(response.headers.entries()),
      responseBody: body,
    });
    return { kind: 'failed', error: classifyError(failure, context), tokens: NO_TOKENS };
  }
  const ids = listedIds(body);
  return ids === null ? null : { kind: 'listed', ids };
}

/** The `id` of every entry of an OpenAI or Anthropic listing (`{ data: [{ id }] }`), or null. */
function listedIds(body: string): string[] | null {
  try {
    const parsed: unknown = JSON.parse(body);
    const data = typeof parsed === 'object' && parsed !== null ? (parsed as { data?: unknown }).data : undefined;
    if (!Array.isArray(data)) return null;
    return data.flatMap((entry: unknown) => {
      const id = typeof entry === 'object' && entry !== null ? (entry as { id?: unknown }).id : undefined;
      return typeof id === 'string' ? [id] : [];
    });
  } catch {
    return null;
  }
}

/** The message of a JSON error body (`{ error: { message } }`, `{ error: "…" }`, `{ message }`), or null. */
function errorText(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    const error = parsed.error;
    if (typeof error === 'string') return error;
    if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') return (error as { message: string }).message;
    return typeof parsed.message === 'string' ? parsed.message : null;
  } catch {
    return null;
  }
}

function fixFor(error: ModelError, model: ModelToCheck, keyEnv: string | null, baseUrl: string): string {
  if (error.kind === 'auth') {
    return keyEnv === null
      ? 'the server wants a key: put it in an environment variable and name it with --api-key-env NAME'
      : `put a valid key for this provider in ${keyEnv}, or name the variable that holds one with --api-key-env NAME`;
  }
  if (/ports the fetch standard blocks/.test(error.message)) return `serve the API on another port and pass that address in --base-url (now ${baseUrl})`;
  if (error.kind === 'unreachable' || error.kind === 'network' || error.kind === 'timeout') {
    return model.baseUrl === undefined
      ? `check that this machine reaches ${baseUrl} (a proxy or a firewall in between?)`
      : `check that --base-url ${baseUrl} is the model API's address (often ending in /v1) and that its server is running`;
  }
  if (error.kind === 'server') return "the provider is failing now: try again later, or look in the server's logs";
  return `check the model's name in ${model.spec} and --base-url`;
}
