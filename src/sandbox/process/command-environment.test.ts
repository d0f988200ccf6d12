import { describe, expect, it } from 'vitest';
import { buildCommandEnvironment } from './command-environment.js';

describe('buildCommandEnvironment', () => {
  const parent = {
    PATH: '/opt/bin:/usr/bin',
    HOME: '/home/dev',
    LANG: 'en_US.UTF-8',
    ANTHROPIC_API_KEY: 'sk-ant-secret',
    GITHUB_TOKEN: 'ghp-secret',
    NODE_OPTIONS: '--inspect',
    TERM: 'xterm-256color',
  };

  it('copies only allowlisted variables and fixes the unattended ones', () => {
    const environment = buildCommandEnvironment(parent);
    expect(environment).toMatchObject({ PATH: '/opt/bin:/usr/bin', HOME: '/home/dev', LANG: 'en_US.UTF-8' });
    expect(environment).toMatchObject({ TERM: 'dumb', SHELL: '/bin/bash', CI: '1', GIT_TERMINAL_PROMPT: '0' });
    expect(environment).not.toHaveProperty('ANTHROPIC_API_KEY');
    expect(environment).not.toHaveProperty('GITHUB_TOKEN');
    expect(environment).not.toHaveProperty('NODE_OPTIONS');
  });

  it('lets the caller add and override variables', () => {
    const environment = buildCommandEnvironment(parent, { GIT_AUTHOR_NAME: 'worker', TERM: 'vt100' });
    expect(environment.GIT_AUTHOR_NAME).toBe('worker');
    expect(environment.TERM).toBe('vt100');
  });

  it('falls back to a usable PATH and LANG when the parent has none', () => {
    const environment = buildCommandEnvironment({});
    expect(environment.PATH).toContain('/usr/bin');
    expect(environment.LANG).toBe('C.UTF-8');
    expect(environment).not.toHaveProperty('HOME');
  });
});
