import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { CommandContext } from '../command-context.js';
import { applyConfiguration } from './apply-configuration.js';

let repo: string;

beforeEach(() => {
  repo = mkdtempSync(join(tmpdir(), 'colony-apply-'));
});

afterEach(() => {
  rmSync(repo, { recursive: true, force: true });
});

function contextWith(env: Record<string, string>): { ctx: CommandContext; printed: string[] } {
  const printed: string[] = [];
  const ctx: CommandContext = { stdout: (text) => printed.push(text), stderr: (text) => printed.push(text), env, cwd: repo, signal: new AbortController().signal, secrets: [], exitCode: 0 };
  return { ctx, printed };
}

function parsed(): Command {
  const command = new Command('run').exitOverride().option('--repo <dir>', '', '.').option('--api-key-env <name>', '').option('--workers <n>', '', Number, 4);
  return command.parse([], { from: 'user' });
}

it('keeps the key of an api-key-env a file names out of what the command prints and records', () => {
  writeFileSync(join(repo, 'colony.toml'), 'api-key-env = "TEAM_LLM"\n');
  const { ctx, printed } = contextWith({ TEAM_LLM: 'a-team-key-0123456789' });
  const applied = applyConfiguration<{ repo: string; apiKeyEnv?: string }>(ctx, parsed());
  expect(applied?.flags.apiKeyEnv).toBe('TEAM_LLM');
  expect(applied?.ctx.secrets).toContain('a-team-key-0123456789');
  applied?.ctx.stderr('the provider said: bad key a-team-key-0123456789\n');
  expect(printed).toEqual(['the provider said: bad key [redacted]\n']);
});

it('reports a broken file as a usage error and gives no flags', () => {
  writeFileSync(join(repo, 'colony.toml'), 'workers = "many"\n');
  const { ctx, printed } = contextWith({});
  expect(applyConfiguration(ctx, parsed())).toBeNull();
  expect(ctx.exitCode).toBe(2);
  expect(printed.join('')).toContain(`colony: ${join(repo, 'colony.toml')}: workers takes a whole number, got the string "many".`);
});
