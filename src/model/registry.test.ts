import { afterEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from './chat-model.js';
import { startModelServer } from './server/model-server.js';
import type { ModelServer } from './server/model-server.js';
import { createChatModel } from './providers/language-model-chat.js';
import { resolveModel } from './registry.js';
import type { ModelFactory, ResolveResult } from './registry.js';
import { createScriptedLanguageModel } from './testing/scripted-language-model.js';
import type { ParsedSpec } from './model-spec.js';

const KEYS = { OPENAI_API_KEY: 'sk-openai-secret', ANTHROPIC_API_KEY: 'sk-ant-secret', MY_KEY: 'sk-mine-secret' };

function errorOf(result: ResolveResult): string {
  if (result.ok) throw new Error(`expected an error, resolved ${result.model.spec}`);
  for (const key of Object.values(KEYS)) expect(result.error).not.toContain(key);
  return result.error;
}

describe('resolveModel errors', () => {
  it('names the missing key variable and --api-key-env', () => {
    expect(errorOf(resolveModel('openai:gpt-5', { env: {} }))).toMatch(/OPENAI_API_KEY.*--api-key-env/s);
    expect(errorOf(resolveModel('anthropic:claude-opus-4-5', { env: { ANTHROPIC_API_KEY: '  ' } }))).toContain('ANTHROPIC_API_KEY');
    const custom = errorOf(resolveModel('openai:gpt-5', { env: KEYS, apiKeyEnv: 'TEAM_OPENAI_KEY' }));
    expect(custom).toContain('TEAM_OPENAI_KEY');
    expect(errorOf(resolveModel('openai-compatible:x', { env: {}, baseUrl: 'http://127.0.0.1:1/v1', apiKeyEnv: 'LOCAL_KEY' }))).toContain(
      'LOCAL_KEY',
    );
  });

  it('asks for --base-url for openai-compatible', () => {
    expect(errorOf(resolveModel('openai-compatible:qwen3-coder', { env: KEYS, apiKeyEnv: 'MY_KEY' }))).toContain('--base-url URL');
  });

  it('lists the accepted forms for an unknown provider or a malformed spec', () => {
    const unknown = errorOf(resolveModel('gemini:pro', { env: KEYS }));
    expect(unknown).toContain('unknown provider "gemini"');
    for (const spec of ['', 'openai gpt-5', ':gpt-5', 'OpenAI:gpt-5']) {
      const error = errorOf(resolveModel(spec, { env: KEYS }));
      expect(error).toContain('malformed');
      for (const form of ['openai:<model>', 'anthropic:<model>', 'openai-compatible:<model> with --base-url URL']) {
        expect(error).toContain(form);
      }
    }
  });

  it('refuses a spec without a model, with options, or with an unusable base URL', () => {
    expect(errorOf(resolveModel('openai:', { env: KEYS }))).toContain('no model name');
    expect(errorOf(resolveModel('anthropic:claude-opus-4-5?fast=1', { env: KEYS }))).toContain('does not take');
    expect(errorOf(resolveModel('openai:gpt-5', { env: KEYS, baseUrl: 'not a url' }))).toContain('is not a URL');
    expect(errorOf(resolveModel('openai:gpt-5', { env: KEYS, baseUrl: 'ftp://host/v1' }))).toContain('http://');
  });

  it('keeps a model id that contains a colon', () => {
    const resolved = resolveModel('openai-compatible:qwen3-coder:30b', { env: {}, baseUrl: 'http://127.0.0.1:1/v1' });
    expect(resolved.ok && resolved.model.spec).toBe('openai-compatible:qwen3-coder:30b');
  });
});

describe('resolveModel with extra factories', () => {
  it('hands a new provider its parsed spec and lists its form in errors', async () => {
    const seen: ParsedSpec[] = [];
    const sim: ModelFactory = {
      form: 'sim[?seed=N]',
      create: (parsed) => {
        seen.push(parsed);
        return { ok: true, model: createChatModel(createScriptedLanguageModel([{ text: 'simulated' }]), { spec: parsed.spec }) };
      },
    };
    const resolved = resolveModel('sim?seed=7&latency=0', { env: {} }, { sim });
    if (!resolved.ok) throw new Error(resolved.error);
    expect(resolved.model.spec).toBe('sim?seed=7&latency=0');
    expect(seen[0]).toMatchObject({ provider: 'sim', modelId: '' });
    expect(seen[0]?.options.get('seed')).toBe('7');
    expect(await resolved.model.call({ messages: [{ role: 'user', content: 'go' }], tools: [] })).toMatchObject({
      ok: true,
      turn: { text: 'simulated' },
    });
    expect(errorOf(resolveModel('nope', { env: {} }, { sim }))).toContain('sim[?seed=N]');
  });
});

describe('resolveModel credentials on the wire', () => {
  let server: ModelServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });
  const request: ModelRequest = { messages: [{ role: 'user', content: 'hi' }], tools: [] };

  async function headersSentBy(spec: string, options: { apiKeyEnv?: string; trailingSlash?: boolean } = {}): Promise<Record<string, string>> {
    server = await startModelServer({ model: createScriptedLanguageModel([{ text: 'ok' }]) });
    const resolved = resolveModel(spec, {
      env: KEYS,
      baseUrl: `${server.url}/v1${options.trailingSlash === true ? '/' : ''}`,
      apiKeyEnv: options.apiKeyEnv,
    });
    if (!resolved.ok) throw new Error(resolved.error);
    expect(await resolved.model.call(request)).toMatchObject({ ok: true, turn: { text: 'ok' } });
    return { ...server.requests[0]?.headers };
  }

  it('sends the default variable of each provider', async () => {
    expect((await headersSentBy('openai:gpt-5')).authorization).toBe('Bearer sk-openai-secret');
    const anthropic = await headersSentBy('anthropic:claude-haiku-4-5', { trailingSlash: true });
    expect(anthropic['x-api-key']).toBe('sk-ant-secret');
    expect(anthropic['anthropic-version']).toBeDefined();
  });

  it('sends the variable named by --api-key-env instead', async () => {
    expect((await headersSentBy('openai:gpt-5', { apiKeyEnv: 'MY_KEY' })).authorization).toBe('Bearer sk-mine-secret');
  });

  it('sends no key to an openai-compatible server unless asked to', async () => {
    expect((await headersSentBy('openai-compatible:local')).authorization).toBeUndefined();
    await server?.close();
    expect((await headersSentBy('openai-compatible:local', { apiKeyEnv: 'MY_KEY' })).authorization).toBe('Bearer sk-mine-secret');
  });
});
