import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APICallError } from '@ai-sdk/provider';
import type { LanguageModelV3, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { anthropicMessagesFormat } from './anthropic-messages-format.js';
import { playAnswerFault, playTransportFault } from './fault.js';
import type { Fault } from './fault.js';
import { createFaultStorm, parseStormRequest, STORM_PATH } from './fault-storm.js';
import { parseJson, readBody, writeError, writeJson } from './http-responses.js';
import { openAIChatFormat } from './openai-chat-format.js';
import { createPromptCache } from './prompt-cache.js';
import type { CachedInputUsage, PromptCacheOptions } from './prompt-cache.js';
import type { ModelCall, ResponseIdentity, WireFormat } from './wire-format.js';
import { errorMessage } from '../../errors/error-message.js';

export type { Fault } from './fault.js';

export interface ModelServerOptions {
  readonly model: LanguageModelV3;
  readonly host?: string;
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  /** Played one per generation request, from the front, before the model is asked. */
  readonly faults?: readonly Fault[];
  /** Milliseconds since the epoch, for the `created` field of answers and the prompt cache's expiry. */
  readonly now?: () => number;
  /**
   * Bill input as the providers' prompt caches would (see prompt-cache.ts): the input tokens,
   * cached and not, are counted from the request's bytes, in place of what the model reported;
   * output tokens stay the model's. Off by default, so a scripted model's usage reaches the
   * client as scripted; `colony sim-server` turns it on. An object turns it on with limits.
   */
  readonly promptCache?: boolean | PromptCacheOptions;
}

/** A request as the server received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  /** The body parsed as JSON, or its raw text when it is not JSON. */
  readonly body: unknown;
  /** The fault played instead of an answer, if any. */
  readonly fault: Fault | null;
}

export interface ModelServer {
  /** Base address, e.g. `http://127.0.0.1:43121`; the APIs live under `/v1`. */
  readonly url: string;
  readonly requests: readonly RecordedRequest[];
  /** The faults not played yet; push more at any time. */
  readonly faults: Fault[];
  /**
   * Plays `fault` to every generation request for the next `durationMs`, ahead of the queued
   * faults: a 429 storm, say. `POST /control/storm` starts one from outside.
   */
  storm(fault: Fault, durationMs: number): void;
  /** Stops listening and drops open connections, stalled streams included. */
  close(): Promise<void>;
}

const ENDPOINTS: Readonly<Record<string, WireFormat>> = {
  '/v1/chat/completions': openAIChatFormat,
  '/v1/messages': anthropicMessagesFormat,
};

/**
 * Serves any LanguageModelV3 over HTTP in two providers' own wire formats: OpenAI chat
 * completions (`POST /v1/chat/completions`, `GET /v1/models`) and Anthropic messages
 * (`POST /v1/messages`), streamed or not. Each request becomes one `doGenerate` call whose
 * result is written back in the request's format. A malformed request gets a 400 in that
 * format; a client that hangs up cancels the model call. Faults (queued, or a storm of
 * them) stand in for answers, to test clients.
 */
export async function startModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [...(options.faults ?? [])];
  const now = options.now ?? Date.now;
  const storm = createFaultStorm();
  const promptCache =
    options.promptCache === undefined || options.promptCache === false
      ? null
      : createPromptCache(now, options.promptCache === true ? {} : options.promptCache);
  let answered = 0;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? 'GET';
    const path = new URL(request.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '');
    const format = ENDPOINTS[path] ?? (path.startsWith('/v1/messages') ? anthropicMessagesFormat : openAIChatFormat);
    const body = await readBody(request);
    const json = body.ok ? parseJson(body.text) : null;
    const isGeneration = method === 'POST' && ENDPOINTS[path] !== undefined;
    const fault = isGeneration ? (storm.current() ?? faults.shift() ?? null) : null;
    requests.push({
      method,
      path,
      headers: flattenHeaders(request),
      body: json?.ok === true ? json.value : body.ok ? body.text : null,
      fault,
    });

    if (method === 'GET' && path === '/v1/models') {
      writeJson(response, 200, {
        object: 'list',
        data: [{ id: options.model.modelId, object: 'model', created: 0, owned_by: options.model.provider }],
      });
      return;
    }
    if (method === 'POST' && path === STORM_PATH) {
      const asked = parseStormRequest(json?.ok === true ? json.value : null);
      if (!asked.ok) {
        writeError(response, openAIChatFormat, 400, asked.error);
        return;
      }
      storm.start(asked.fault, asked.durationMs);
      writeJson(response, 200, { storm: asked.fault, seconds: asked.durationMs / 1000 });
      return;
    }
    if (!isGeneration) {
      const known = ENDPOINTS[path] !== undefined;
      const message = `${method} ${path} is not served here. This server answers POST /v1/chat/completions, POST /v1/messages and GET /v1/models, and starts fault storms at POST ${STORM_PATH}.`;
      writeError(response, format, known ? 405 : 404, message);
      return;
    }
    if (fault !== null && playTransportFault(fault, format, request, response)) return;
    if (!body.ok) {
      writeError(response, format, 413, 'The request body is too large.');
      return;
    }
    if (json === null || !json.ok) {
      writeError(response, format, 400, `The request body is not valid JSON: ${json?.ok === false ? json.error : 'empty'}.`);
      return;
    }
    const parsed = format.parseRequest(json.value);
    if (!parsed.ok) {
      writeError(response, format, 400, parsed.error);
      return;
    }
    answered += 1;
    const identity: ResponseIdentity = {
      id: `${format.idPrefix}${String(answered).padStart(6, '0')}`,
      createdSeconds: Math.floor(now() / 1000),
    };
    if (fault !== null) {
      playAnswerFault(fault, format, parsed.call, identity, response);
      return;
    }
    await answer(format, parsed.call, identity, response);
  }

  async function answer(format: WireFormat, call: ModelCall, identity: ResponseIdentity, response: ServerResponse): Promise<void> {
    const hangUp = new AbortController();
    const onClose = (): void => {
      if (!response.writableFinished) hangUp.abort();
    };
    response.on('close', onClose);
    try {
      const generated = await options.model.doGenerate({
        prompt: call.prompt,
        tools: [...call.tools],
        ...(call.toolChoice === null ? {} : { toolChoice: { type: call.toolChoice } }),
        ...(call.maxOutputTokens === undefined ? {} : { maxOutputTokens: call.maxOutputTokens }),
        abortSignal: hangUp.signal,
      });
      if (response.destroyed) return;
      const result = promptCache === null ? generated : withInputUsage(generated, promptCache.account(call.cacheable));
      if (!call.stream) {
        writeJson(response, 200, format.responseBody(result, call, identity));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const frame of format.streamFrames(result, call, identity)) response.write(frame.text);
      response.end();
    } catch (error) {
      if (hangUp.signal.aborted) return;
      // A request the model refused (one larger than its context window, say) is the client's
      // to fix: it gets the model's status and words, as from a real provider.
      if (APICallError.isInstance(error) && error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        writeError(response, format, error.statusCode, error.message, {}, errorCodeOf(error.data));
        return;
      }
      const message = errorMessage(error);
      writeError(response, format, 500, `The model failed: ${message}`);
    } finally {
      response.off('close', onClose);
    }
  }

  const server = createServer((request, response) => {
    response.on('error', () => undefined);
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      const message = errorMessage(error);
      writeError(response, openAIChatFormat, 500, `The server failed: ${message}`);
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    requests,
    faults,
    storm: (fault, durationMs) => storm.start(fault, durationMs),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      }),
  };
}

function withInputUsage(result: LanguageModelV3GenerateResult, input: CachedInputUsage): LanguageModelV3GenerateResult {
  return {
    ...result,
    usage: {
      ...result.usage,
      inputTokens: {
        total: input.total,
        noCache: input.total - input.cacheRead - input.cacheWrite,
        cacheRead: input.cacheRead,
        cacheWrite: input.cacheWrite,
      },
    },
  };
}

function errorCodeOf(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || !('code' in data)) return undefined;
  return typeof data.code === 'string' ? data.code : undefined;
}

function flattenHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
