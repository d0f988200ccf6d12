import { describe, expect, it } from 'vitest';
import { createSecretRedactor, redactUrlCredentials, secretsInEnvironment } from './secret-redaction.js';

describe('secretsInEnvironment', () => {
  it('takes the values of variables named like credentials and of the ones named explicitly', () => {
    const env = {
      OPENAI_API_KEY: 'sk-openai-0123456789',
      ANTHROPIC_API_KEY: '  sk-ant-0123456789\n',
      GITHUB_TOKEN: 'ghp_0123456789',
      MY_LLM: 'custom-key-0123456789',
      DB_PASSWORD: 'hunter2hunter2',
      SHORT_TOKEN: 'abc',
      PATH: '/usr/bin:/bin',
      HOME: '/home/someone',
      UNSET_KEY: undefined,
    };
    expect(secretsInEnvironment(env, ['MY_LLM']).sort()).toEqual(['custom-key-0123456789', 'ghp_0123456789', 'hunter2hunter2', 'sk-ant-0123456789', 'sk-openai-0123456789']);
    expect(secretsInEnvironment(env)).not.toContain('custom-key-0123456789');
  });
});

describe('createSecretRedactor', () => {
  const redactor = createSecretRedactor(['sk-short-12345', 'sk-short-12345-and-longer', 'tiny']);

  it('replaces every occurrence of every secret, the longest first, and never a value too short to be one', () => {
    expect(redactor.redactText('a sk-short-12345-and-longer b sk-short-12345 c sk-short-12345 tiny')).toBe('a [redacted] b [redacted] c [redacted] tiny');
  });

  it('replaces the credentials of any URL, known or not', () => {
    expect(redactUrlCredentials('GET https://user:pa55@example.com/v1 and ssh://git@host/r and http://host/ok')).toBe(
      'GET https://[redacted]@example.com/v1 and ssh://[redacted]@host/r and http://host/ok',
    );
    expect(redactor.redactText('Request cannot be constructed from a URL that includes credentials: http://colony:x@127.0.0.1:80/v1')).toBe(
      'Request cannot be constructed from a URL that includes credentials: http://[redacted]@127.0.0.1:80/v1',
    );
  });

  it('redacts every string of a value, nested, keys too, without changing the original', () => {
    const original = { a: ['sk-short-12345', { 'sk-short-12345': 1, n: 2, b: true, z: null }] };
    expect(redactor.redactValue(original)).toEqual({ a: ['[redacted]', { '[redacted]': 1, n: 2, b: true, z: null }] });
    expect(original.a[0]).toBe('sk-short-12345');
  });
});
