import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommandContext } from '../command-context.js';
import { defineRunCommand } from '../commands/run.js';
import { runFlagDefaults, runSettingOptions } from '../run-setting-options.js';
import { configTemplate } from './config-template.js';
import { configureCommand } from './configured-flags.js';
import { INVOCATION_FLAGS, SETTINGS } from './setting-table.js';

const ctx: CommandContext = { stdout: () => undefined, stderr: () => undefined, env: {}, cwd: '/', signal: new AbortController().signal, exitCode: 0 };

let repo: string;

beforeEach(() => {
  repo = mkdtempSync(join(tmpdir(), 'colony-template-'));
});

afterEach(() => {
  rmSync(repo, { recursive: true, force: true });
});

function load(text: string) {
  writeFileSync(join(repo, 'colony.toml'), text);
  const command = new Command('run').exitOverride().option('--repo <dir>', '', repo);
  for (const option of runSettingOptions(ctx)) command.addOption(option);
  command.parse([], { from: 'user' });
  return configureCommand(command, {}, repo);
}

describe('the colony.toml colony init writes', () => {
  const template = configTemplate(runFlagDefaults(ctx));

  it('loads as it is, every setting left at its default', () => {
    const loaded = load(template);
    expect(loaded.ok).toBe(true);
    expect(loaded.ok && loaded.settings.every((each) => each.source.kind === 'default')).toBe(true);
  });

  it('shows every setting, each of whose values loads when uncommented', () => {
    const shown = template.split('\n').filter((line) => /^# [a-z-]+ = /.test(line));
    expect(shown).toHaveLength(SETTINGS.length);
    const uncommented = template.replace(/^# ([a-z-]+ = )/gm, '$1');
    const loaded = load(uncommented);
    if (!loaded.ok) throw new Error(loaded.error);
    expect(loaded.settings.filter((each) => each.source.kind === 'project-file')).toHaveLength(SETTINGS.length);
    expect(template).toContain('# workers = 4\n');
    expect(template).toContain('[green]\n\n# The project\'s check, run on snapshots of main. Default: the goal\'s colony-spec test command');
  });
});

describe('the table of settings', () => {
  it('has a setting for every flag of colony run but those of one invocation', () => {
    const run = new Command('run');
    defineRunCommand(run, ctx);
    const flags = run.options.map((option) => option.long ?? '');
    expect(flags.filter((flag) => !INVOCATION_FLAGS.includes(flag) && !SETTINGS.some((setting) => setting.flag === flag))).toEqual([]);
    expect(SETTINGS.filter((setting) => !flags.includes(setting.flag)).map((setting) => setting.flag)).toEqual([]);
  });
});
