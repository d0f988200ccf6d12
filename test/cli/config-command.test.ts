import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../testing/example-repository.js';

let base: string;
let repo: string;
let home: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'colony-config-command-'));
  repo = join(base, 'project');
  home = join(base, 'home');
  mkdirSync(repo);
  mkdirSync(join(home, '.config', 'colony'), { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

describe('colony init', () => {
  it('writes a commented colony.toml and a GOAL.md template, says what to do next, and refuses to overwrite either', async () => {
    const wrote = await runCli(['init', '--repo', repo]);
    expect(wrote.code, wrote.stderr).toBe(0);
    expect(wrote.stdout).toContain(`colony init wrote, in ${repo}:`);
    expect(wrote.stdout).toContain('colony run GOAL.md');
    const toml = readFileSync(join(repo, 'colony.toml'), 'utf8');
    expect(toml).toContain('# workers = 4\n');
    expect(readFileSync(join(repo, 'GOAL.md'), 'utf8')).toContain('## Requirements');
    // What it wrote is read back by colony itself: every setting at its default.
    const config = await runCli(['config', '--repo', repo, '--json']);
    expect(config.code, config.stderr).toBe(0);
    expect((JSON.parse(config.stdout) as { settings: { source: { kind: string } }[] }).settings.every((each) => each.source.kind === 'default')).toBe(true);

    writeFileSync(join(repo, 'colony.toml'), 'workers = 2\n');
    const again = await runCli(['init', '--repo', repo]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`${join(repo, 'colony.toml')} already exists, and colony init does not overwrite it.`);
    expect(readFileSync(join(repo, 'colony.toml'), 'utf8')).toBe('workers = 2\n');

    rmSync(join(repo, 'colony.toml'));
    const goalThere = await runCli(['init', '--repo', repo]);
    expect(goalThere.code).toBe(2);
    expect(goalThere.stderr).toContain(`${join(repo, 'GOAL.md')} already exists`);
    // Neither is written while one is there.
    expect(() => readFileSync(join(repo, 'colony.toml'))).toThrow();
  });
});

describe('colony config', () => {
  it('shows each setting and where it came from: a flag, a variable, the project file, the user file or the default', async () => {
    writeFileSync(join(repo, 'colony.toml'), 'workers = 2\nmodel = "sim?seed=5"\n[budget]\nusd = 5\n');
    const userFile = join(home, '.config', 'colony', 'config.toml');
    writeFileSync(userFile, 'max-steps = 60\nworkers = 1\n');
    const env = { HOME: home, COLONY_HANG_AFTER: '10' };
    const text = await runCli(['config', '--repo', repo, '--planner-max-steps', '500'], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`\\n  workers +2 +${join(repo, 'colony.toml')}\\n`));
    expect(text.stdout).toMatch(/\n {2}model +"sim\?seed=5" +\S+colony\.toml\n/);
    expect(text.stdout).toMatch(new RegExp(`\\n  max-steps +60 +${userFile}\\n`));
    expect(text.stdout).toMatch(/\n {2}planner-max-steps +500 +flag --planner-max-steps\n/);
    expect(text.stdout).toMatch(/\n {2}hang-after +10 +COLONY_HANG_AFTER\n/);
    expect(text.stdout).toMatch(/\n {2}budget\.tokens +\(no limit\) +default\n/);

    const json = await runCli(['config', '--repo', repo, '--json', '--workers', '3'], { env });
    const shown = JSON.parse(json.stdout) as { files: unknown[]; settings: { name: string; value: unknown; source: unknown }[] };
    expect(shown.files).toEqual([
      { file: join(repo, 'colony.toml'), kind: 'project-file', found: true },
      { file: userFile, kind: 'user-file', found: true },
    ]);
    const byName = new Map(shown.settings.map((each) => [each.name, each]));
    expect(byName.get('workers')).toMatchObject({ value: 3, source: { kind: 'flag', flag: '--workers' } });
    expect(byName.get('budget.usd')).toMatchObject({ value: 5, source: { kind: 'project-file', file: join(repo, 'colony.toml') } });
    expect(byName.get('sandbox.method')).toMatchObject({ value: 'bubblewrap', source: { kind: 'default' } });
  });

  it('refuses a broken file with exit 2, naming the file and the key', async () => {
    writeFileSync(join(repo, 'colony.toml'), '[green]\nbrnach = "release"\n');
    const broken = await runCli(['config', '--repo', repo]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`colony: ${join(repo, 'colony.toml')}: there is no setting "brnach" in [green]; did you mean "branch"?`);
    expect(broken.stderr).toContain('The settings in [green]: check, every, branch, tag, check-timeout.');

    const missing = await runCli(['config', '--repo', join(base, 'nowhere')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`colony: ${join(base, 'nowhere')} does not exist.`);
  });
});
