import { APICallError, JSONParseError, TypeValidationError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { parseRetryAfterMs } from './http-error-classification.js';
import { backoffDelayMs, classifyError, DEFAULT_RETRY_POLICY, resolveRetryPolicy } from './retry.js';

function httpError(statusCode: number, message: string, extra: { headers?: Record<string, string>; body?: string } = {}): APICallError {
  return new APICallError({
    message,
    url: 'https://api.example.test/v1/chat/completions',
    requestBodyValues: {},
    statusCode,
    ...(extra.headers === undefined ? {} : { responseHeaders: extra.headers }),
    ...(extra.body === undefined ? {} : { responseBody: extra.body }),
  });
}

/** What fetch throws when the connection fails: a TypeError caused by a coded system error. */
function fetchFailure(code: string, message: string): TypeError {
  const cause = Object.assign(new Error(message), { code });
  return new TypeError('fetch failed', { cause });
}

describe('classifyError', () => {
  it.each([
    [429, 'rate-limit', true],
    [408, 'timeout', true],
    [409, 'server', true],
    [500, 'server', true],
    [503, 'server', true],
    [529, 'server', true],
    [400, 'bad-request', false],
    [404, 'bad-request', false],
    [422, 'bad-request', false],
    [401, 'auth', false],
    [403, 'auth', false],
  ] as const)('classifies HTTP %i as %s (retryable: %s)', (status, kind, retryable) => {
    expect(classifyError(httpError(status, 'nope'))).toMatchObject({ kind, status, retryable });
  });

  it('reads retry-after in seconds and retry-after-ms', () => {
    expect(classifyError(httpError(429, 'slow down', { headers: { 'retry-after': '12' } })).retryAfterMs).toBe(12_000);
    expect(classifyError(httpError(503, 'busy', { headers: { 'retry-after-ms': '1500' } })).retryAfterMs).toBe(1500);
    expect(classifyError(httpError(429, 'slow down')).retryAfterMs).toBeNull();
  });

  it('reads retry-after given as an HTTP date against the injected clock', () => {
    const now = Date.parse('Wed, 21 Oct 2025 07:28:00 GMT');
    const error = httpError(429, 'later', { headers: { 'Retry-After': 'Wed, 21 Oct 2025 07:28:30 GMT' } });
    expect(classifyError(error, { now: () => now }).retryAfterMs).toBe(30_000);
  });

  it.each([
    ['context_length_exceeded', '{"error":{"code":"context_length_exceeded","message":"too long"}}', 'Bad request', 400],
    ['maximum context length', '', "This model's maximum context length is 128000 tokens.", 400],
    ['prompt is too long', '', 'prompt is too long: 210000 tokens > 200000 maximum', 400],
    ['too many tokens', '', 'Too many tokens in the request', 413],
  ])('recognises "%s" as a context-length error that is not retried', (_label, body, message, status) => {
    expect(classifyError(httpError(status, message, { body }))).toMatchObject({ kind: 'context-length', retryable: false, status });
  });

  it('names the API key variable in authentication errors', () => {
    const error = classifyError(httpError(401, 'Invalid API key'), { apiKeyEnv: 'MY_KEY' });
    expect(error.message).toContain('MY_KEY');
    expect(error.message).toContain('--api-key-env');
    expect(classifyError(httpError(401, 'Invalid API key')).message).toContain('--api-key-env');
  });

  it('classifies refused, reset and failed connections as network errors to retry', () => {
    expect(classifyError(fetchFailure('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'))).toMatchObject({
      kind: 'network',
      retryable: true,
      status: null,
    });
    const wrapped = new APICallError({
      message: 'Cannot connect to API: read ECONNRESET',
      url: 'u',
      requestBodyValues: {},
      cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      isRetryable: true,
    });
    const classified = classifyError(wrapped);
    expect(classified).toMatchObject({ kind: 'network', retryable: true });
    expect(classified.message.match(/read ECONNRESET/g)).toHaveLength(1);
    expect(classifyError(new TypeError('terminated'))).toMatchObject({ kind: 'network' });
  });

  it('classifies a port fetch refuses to connect to as unreachable, never retried, naming the port when it can', () => {
    const refused = new APICallError({
      message: 'Cannot connect to API: bad port',
      url: 'http://127.0.0.1:6000/v1/chat/completions',
      requestBodyValues: {},
      cause: new Error('bad port'),
    });
    expect(classifyError(refused)).toMatchObject({ kind: 'unreachable', retryable: false, status: null });
    expect(classifyError(refused).message).toContain('port 6000');
    expect(classifyError(new TypeError('fetch failed', { cause: new Error('bad port') })).message).toContain(
      "Node's fetch refuses to connect to the port of its address",
    );
  });

  it('classifies timeouts as timeouts to retry', () => {
    expect(classifyError(fetchFailure('UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error'))).toMatchObject({ kind: 'timeout', retryable: true });
    expect(classifyError(new DOMException('The operation timed out.', 'TimeoutError'))).toMatchObject({ kind: 'timeout' });
  });

  it('classifies an unreadable answer as garbage to retry', () => {
    expect(classifyError(new JSONParseError({ text: '{"a": ', cause: new SyntaxError('Unexpected end') }))).toMatchObject({
      kind: 'garbage',
      retryable: true,
    });
    expect(classifyError(new TypeValidationError({ value: { a: 1 }, cause: new Error('expected choices') }))).toMatchObject({
      kind: 'garbage',
    });
    const invalidJson = new APICallError({
      message: 'Invalid JSON response',
      url: 'u',
      requestBodyValues: {},
      statusCode: 200,
      cause: new JSONParseError({ text: '<html>', cause: new SyntaxError('Unexpected token <') }),
    });
    expect(classifyError(invalidJson)).toMatchObject({ kind: 'garbage', retryable: true });
  });

  it('classifies a cancellation as aborted, never retried', () => {
    expect(classifyError(new DOMException('This operation was aborted', 'AbortError'))).toMatchObject({ kind: 'aborted', retryable: false });
  });

  it('classifies error objects a provider sends inside a stream', () => {
    expect(classifyError({ type: 'overloaded_error', message: 'Overloaded' })).toMatchObject({ kind: 'server', retryable: true });
    expect(classifyError({ type: 'rate_limit_error', message: 'slow' })).toMatchObject({ kind: 'rate-limit', retryable: true });
    expect(classifyError({ type: 'invalid_request_error', message: 'bad tool' })).toMatchObject({ kind: 'bad-request', retryable: false });
    expect(classifyError({ code: 'context_length_exceeded', message: 'long' })).toMatchObject({ kind: 'context-length' });
  });

  it('does not retry an error it does not recognise', () => {
    expect(classifyError(new Error('Unsupported functionality: images'))).toMatchObject({ kind: 'bad-request', retryable: false });
  });
});

describe('backoffDelayMs', () => {
  const policy = resolveRetryPolicy({ baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 });

  it('draws a full-jitter delay below a doubling ceiling', () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffDelayMs(policy, attempt, () => 0.5, null))).toEqual([
      50, 100, 200, 400, 500, 500,
    ]);
    expect(backoffDelayMs(policy, 3, () => 0, null)).toBe(0);
    expect(backoffDelayMs(policy, 3, () => 0.999, null)).toBe(399);
  });

  it('waits at least what retry-after asks, capped by maxRetryAfterMs', () => {
    expect(backoffDelayMs(policy, 1, () => 0.5, 2000)).toBe(2000);
    expect(backoffDelayMs(policy, 5, () => 0.9, 10)).toBe(900);
    expect(backoffDelayMs(policy, 1, () => 0.5, 60_000)).toBe(5000);
  });

  it('has the documented defaults', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({
      maxAttempts: 6,
      baseDelayMs: 500,
      maxDelayMs: 30_000,
      maxRetryAfterMs: 600_000,
      stallTimeoutMs: 120_000,
      maxGarbageRetries: 2,
    });
  });
});

describe('parseRetryAfterMs', () => {
  it('ignores headers it cannot read', () => {
    expect(parseRetryAfterMs({ 'retry-after': 'soon' }, () => 0)).toBeNull();
    expect(parseRetryAfterMs({ 'retry-after-ms': '' }, () => 0)).toBeNull();
    expect(parseRetryAfterMs(undefined, () => 0)).toBeNull();
  });

  it('never returns a negative wait for a date in the past', () => {
    expect(parseRetryAfterMs({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, () => Date.now())).toBe(0);
  });
});
