import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommandContext } from '../command-context.js';
import { runSettingOptions } from '../run-setting-options.js';
import { configureCommand, type Configuration } from './configured-flags.js';

let dir: string;
let repo: string;
let home: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colony-config-'));
  repo = join(dir, 'repo');
  home = join(dir, 'home');
  mkdirSync(repo);
  mkdirSync(join(home, '.config', 'colony'), { recursive: true });
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const ctx: CommandContext = { stdout: () => undefined, stderr: () => undefined, env: {}, cwd: '/', signal: new AbortController().signal, exitCode: 0 };

/** `colony run`'s setting flags, parsed from `argv` and configured from the files and `env`. */
function configure(argv: readonly string[] = [], env: Record<string, string> = {}): { configuration: Configuration; flags: Record<string, unknown> } {
  const command = new Command('run').exitOverride().option('--repo <dir>', '', repo);
  for (const option of runSettingOptions(ctx)) command.addOption(option);
  command.parse([...argv], { from: 'user' });
  const configuration = configureCommand(command, { HOME: home, ...env }, repo);
  return { configuration, flags: command.opts() };
}

const projectFile = (text: string) => writeFileSync(join(repo, 'colony.toml'), text);
const userFile = (text: string) => writeFileSync(join(home, '.config', 'colony', 'config.toml'), text);

function sourceOf(configuration: Configuration, name: string): unknown {
  if (!configuration.ok) throw new Error(configuration.error);
  return configuration.settings.find((each) => (each.setting.table === undefined ? each.setting.key : `${each.setting.table}.${each.setting.key}`) === name)?.source;
}

function errorOf(configuration: Configuration): string {
  if (configuration.ok) throw new Error('the configuration was taken');
  return `${configuration.error}\n${configuration.hint ?? ''}`;
}

describe('configuring colony run', () => {
  it('takes a flag over a COLONY_* variable over the project file over the user file over the default', () => {
    userFile('workers = 1\nmodel = "sim?seed=1"\n');
    projectFile('workers = 2\n');
    const all = configure(['--workers', '4'], { COLONY_WORKERS: '3' });
    expect(all.flags['workers']).toBe(4);
    expect(sourceOf(all.configuration, 'workers')).toEqual({ kind: 'flag', flag: '--workers' });
    expect(all.flags['model']).toBe('sim?seed=1');
    expect(sourceOf(all.configuration, 'model')).toEqual({ kind: 'user-file', file: join(home, '.config', 'colony', 'config.toml') });

    const environment = configure([], { COLONY_WORKERS: '3' });
    expect(environment.flags['workers']).toBe(3);
    expect(sourceOf(environment.configuration, 'workers')).toEqual({ kind: 'environment', variable: 'COLONY_WORKERS' });

    const project = configure();
    expect(project.flags['workers']).toBe(2);
    expect(sourceOf(project.configuration, 'workers')).toEqual({ kind: 'project-file', file: join(repo, 'colony.toml') });

    rmSync(join(repo, 'colony.toml'));
    expect(configure().flags['workers']).toBe(1);
    rmSync(join(home, '.config', 'colony', 'config.toml'));
    const none = configure();
    expect(none.flags['workers']).toBe(4);
    expect(sourceOf(none.configuration, 'workers')).toEqual({ kind: 'default' });
  });

  it('reads the user file from XDG_CONFIG_HOME when it is set', () => {
    mkdirSync(join(dir, 'xdg', 'colony'), { recursive: true });
    writeFileSync(join(dir, 'xdg', 'colony', 'config.toml'), 'max-steps = 7\n');
    userFile('max-steps = 9\n');
    expect(configure([], { XDG_CONFIG_HOME: join(dir, 'xdg') }).flags['maxSteps']).toBe(7);
    expect(configure().flags['maxSteps']).toBe(9);
  });

  it('takes every table, each value as its flag would give it, file names relative to the file', () => {
    projectFile(
      [
        'prices = "config/prices.json"',
        'shared-deps = false',
        'workspace-disk-cap = "3G"',
        'hang-after = 2.5',
        '[budget]',
        'tokens = 2_000_000',
        'usd = 0.5',
        'max-hours = 8',
        '[sandbox]',
        'method = "unshare"',
        'network-allow = ["registry.npmjs.org", "*.github.com"]',
        'command-memory = "1G"',
        'command-processes = 64',
        '[freshness]',
        'context-window = { sim = 64000, "openai:gpt-5" = 400000 }',
        'max-output-tokens = 8000',
        'compact-at = 70',
        'compaction = false',
        'reflect-every = { planner = 10, worker = "off" }',
        'scratchpad-every = 5',
        '[green]',
        'check = "npm test"',
        'every = "5,2m"',
        'branch = "release"',
        'tag = true',
        'check-timeout = 2',
      ].join('\n'),
    );
    const { configuration, flags } = configure();
    expect(configuration.ok).toBe(true);
    expect(flags).toMatchObject({
      prices: join(repo, 'config', 'prices.json'),
      sharedDeps: false,
      workspaceDiskCap: 3 * 2 ** 30,
      hangAfter: 2.5,
      budgetTokens: 2_000_000,
      budgetUsd: 0.5,
      maxHours: 8,
      sandbox: 'unshare',
      networkAllow: ['registry.npmjs.org', '*.github.com'],
      commandMemory: 2 ** 30,
      commandProcesses: 64,
      contextWindow: { all: null, byModel: { sim: 64_000, 'openai:gpt-5': 400_000 } },
      maxOutputTokens: { all: 8_000, byModel: {} },
      compactAt: 70,
      compaction: false,
      reflectEvery: { planner: 10, worker: null },
      scratchpadEvery: { planner: 5, worker: 5 },
      check: 'npm test',
      greenEvery: { everyCommits: 5, everyMs: 120_000 },
      greenBranch: 'release',
      greenTag: true,
      checkTimeout: 2,
    });
    expect(sourceOf(configuration, 'green.every')).toEqual({ kind: 'project-file', file: join(repo, 'colony.toml') });
  });

  it('reads switches and lists from COLONY_* variables as their flags take them', () => {
    const { flags } = configure([], { COLONY_SHARED_DEPS: 'false', COLONY_GREEN_TAG: '1', COLONY_NETWORK_ALLOW: 'registry.npmjs.org', COLONY_BUDGET_USD: '2.5' });
    expect(flags).toMatchObject({ sharedDeps: false, greenTag: true, networkAllow: ['registry.npmjs.org'], budgetUsd: 2.5 });
    expect(errorOf(configure([], { COLONY_SHARED_DEPS: 'maybe' }).configuration)).toContain('COLONY_SHARED_DEPS takes true or false (or 1 or 0), got "maybe"');
    expect(errorOf(configure([], { COLONY_WORKERS: 'many' }).configuration)).toContain('COLONY_WORKERS=many: expected a positive whole number, got "many"');
  });

  it('refuses a key that is no setting, naming the file, the key, the closest one and those allowed there', () => {
    projectFile('wokers = 2\n');
    const typo = errorOf(configure().configuration);
    expect(typo).toContain(`${join(repo, 'colony.toml')}: there is no setting "wokers" at the top of the file; did you mean "workers"?`);
    expect(typo).toContain('The settings at the top of the file: model, planner-model,');
    expect(typo).toContain('[budget], [sandbox], [freshness], [green].');

    projectFile('[budget]\ndollars = 5\n');
    expect(errorOf(configure().configuration)).toMatch(/there is no setting "dollars" in \[budget\]\.\nThe settings in \[budget\]: tokens, usd, max-hours\./);
    projectFile('usd = 5\n');
    expect(errorOf(configure().configuration)).toContain('there is no setting "usd" at the top of the file; it belongs in [budget] (budget.usd).');
    projectFile('[sandbx]\nmethod = "none"\n');
    expect(errorOf(configure().configuration)).toContain('did you mean the table [sandbox]?');
    projectFile('budget = 5\n');
    expect(errorOf(configure().configuration)).toContain('budget is a table of settings, not a value: write them under [budget] (tokens, usd, max-hours).');
    userFile('[green]\nbranches = "release"\n');
    rmSync(join(repo, 'colony.toml'));
    expect(errorOf(configure().configuration)).toContain(`${join(home, '.config', 'colony', 'config.toml')}: there is no setting "branches" in [green]; did you mean "branch"?`);
  });

  it('refuses a bad value naming the file, the setting, what was given and what is allowed, by the flag\'s own parser', () => {
    const file = join(repo, 'colony.toml');
    projectFile('workers = "four"\n');
    expect(errorOf(configure().configuration)).toContain(`${file}: workers takes a whole number, got the string "four".`);
    projectFile('workers = 0\n');
    expect(errorOf(configure().configuration)).toContain(`${file}: workers = 0: expected a positive whole number, got "0".`);
    projectFile('[sandbox]\nmethod = "jail"\n');
    expect(errorOf(configure().configuration)).toContain(`${file}: sandbox.method = "jail": Allowed choices are bubblewrap, unshare, none.`);
    projectFile('[freshness]\ncompact-at = 5\n');
    expect(errorOf(configure().configuration)).toContain('freshness.compact-at = 5: --compact-at takes a percentage from 10 to 100');
    projectFile('[green]\nevery = "sometimes"\n');
    expect(errorOf(configure().configuration)).toContain('green.every = "sometimes": --green-every "sometimes": "sometimes" is neither a count of commits nor minutes');
    projectFile('[sandbox]\nnetwork-allow = [1, 2]\n');
    expect(errorOf(configure().configuration)).toContain('sandbox.network-allow takes a host or an array of hosts');
    // A value a flag overrides is still checked: the file is wrong whichever wins today.
    projectFile('workers = -1\n');
    expect(errorOf(configure(['--workers', '3']).configuration)).toContain('workers = -1: expected a positive whole number');
  });

  it('says where TOML does not parse: the file, the line and the column', () => {
    projectFile('workers = 2\nmodel = sim\n');
    const error = errorOf(configure().configuration);
    expect(error).toContain(`${join(repo, 'colony.toml')}, line 2, column 9: this is not valid TOML: invalid value.`);
    expect(error).toContain('2:  model = sim');
    // The lines shown around a syntax error never show a key.
    projectFile('api-key-env = sk-abcdefghijklmnopqrstuvwx\n');
    expect(errorOf(configure().configuration)).toContain('1:  api-key-env = [redacted]');
    expect(errorOf(configure().configuration)).not.toContain('sk-abcdefghijklmnopqrstuvwx');
  });

  it('refuses API keys in files and variables without repeating them', () => {
    projectFile('api-key = "sk-abcdefghijklmnopqrstuvwx"\n');
    const key = errorOf(configure().configuration);
    expect(key).toContain('"api-key" would hold a credential. API keys never go in colony\'s settings');
    expect(key).toContain('api-key-env = "OPENAI_API_KEY"');
    expect(key).not.toContain('sk-abcdefghijklmnopqrstuvwx');

    projectFile('[sandbox]\ntoken = "abc"\n');
    expect(errorOf(configure().configuration)).toContain('"sandbox.token" would hold a credential.');
    projectFile('api-key-env = "sk-abcdefghijklmnopqrstuvwx"\n');
    const asName = errorOf(configure().configuration);
    expect(asName).toContain('api-key-env holds what looks like an API key (not repeated here)');
    expect(asName).not.toContain('sk-abcdefghijklmnopqrstuvwx');
    projectFile('api-key-env = "my key"\n');
    expect(errorOf(configure().configuration)).toContain('api-key-env names the environment variable that holds the API key');
    projectFile('base-url = "https://me:hunter2hunter2@llm.example/v1"\n');
    expect(errorOf(configure().configuration)).not.toContain('hunter2');
    expect(errorOf(configure().configuration)).toContain('base-url carries a user name or password');
    projectFile('[green]\ncheck = "curl -H x sk-ant-abcdefghijklmnop1234"\n');
    expect(errorOf(configure().configuration)).toContain('green.check holds what looks like an API key');

    rmSync(join(repo, 'colony.toml'));
    expect(errorOf(configure([], { COLONY_API_KEY_ENV: 'sk-proj-abcdefghijklmnop' }).configuration)).toContain('COLONY_API_KEY_ENV: api-key-env holds what looks like an API key');
    projectFile('api-key-env = "OPENAI_API_KEY"\n');
    expect(configure().flags['apiKeyEnv']).toBe('OPENAI_API_KEY');
  });

  it('warns of a COLONY_* variable one slip from a setting, and leaves colony\'s other variables alone', () => {
    const { configuration, flags } = configure([], { COLONY_WORKRES: '3', COLONY_REQUIRE_SANDBOX_TESTS: '1', COLONY_TEST_API_KEY: 'x', COLONY_SOMETHING_ELSE: 'y' });
    expect(flags['workers']).toBe(4);
    expect(configuration.ok && configuration.warnings).toEqual(['colony: WARNING: COLONY_WORKRES is not a setting and is ignored; did you mean COLONY_WORKERS? (colony config lists every setting\'s variable)']);
  });

  it('applies only the settings the command has a flag for', () => {
    projectFile('workers = 2\ntui = false\n');
    const resume = new Command('resume').exitOverride().option('--repo <dir>', '', repo).option('--no-tui', '');
    resume.parse([], { from: 'user' });
    const configuration = configureCommand(resume, { HOME: home }, repo);
    expect(configuration.ok && configuration.settings.map((each) => each.setting.key)).toEqual(['tui']);
    expect(resume.opts()).toEqual({ repo, tui: false });
  });
});
