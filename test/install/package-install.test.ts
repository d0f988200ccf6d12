import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

const execFileAsync = promisify(execFile);
const CHECKOUT = resolve(import.meta.dirname, '..', '..');

/**
 * colony as a user installs it: the package `npm pack` makes, installed with `npm install -g`
 * into a new prefix, run from a directory outside the checkout with a PATH that reaches only
 * that prefix's `colony`.
 *
 * better-sqlite3's install script takes its prebuilt binary from GitHub, which this machine
 * cannot reach, and builds it from source instead: a minute of CPU per install. The installs
 * here take it from a folder, as prebuild-install does on a machine kept offline
 * (`npm_config_better_sqlite3_local_prebuilds`), packed from the checkout's own build.
 */
/**
 * Packs the checkout's compiled better-sqlite3 as its release asset is named and laid out
 * (`build/Release/better_sqlite3.node` in `<name>-v<version>-node-v<abi>-<platform>-<arch>.tar.gz`)
 * into `dir`, and returns `dir`.
 */
function packPrebuiltSqlite(dir: string): string {
  const sqliteDir = join(CHECKOUT, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')) as { version: string };
  mkdirSync(dir, { recursive: true });
  const asset = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(dir, asset), '-C', sqliteDir, 'build/Release/better_sqlite3.node']);
  return dir;
}

describeRuns('the installed package', () => {
  let home: string;
  let prefix: string;
  let away: string;
  let tarball: string;
  let npmEnv: NodeJS.ProcessEnv;

  const colony = (args: readonly string[], cwd = away) =>
    execFileAsync(join(prefix, 'bin', 'colony'), args, {
      cwd,
      env: { PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}`, HOME: home },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });

  /** The packages a command loads, recorded by a resolve hook the process loads first. */
  const packagesLoadedBy = async (args: readonly string[]) => {
    const log = join(away, 'resolved.txt');
    const preload = join(away, 'record-packages.mjs');
    rmSync(log, { force: true });
    await execFileAsync(process.execPath, ['--import', pathToFileURL(preload).href, join(prefix, 'bin', 'colony'), ...args], { cwd: away, env: { PATH: process.env.PATH ?? '', HOME: home } });
    const urls = readFileSync(log, 'utf8').trim().split('\n');
    // The innermost node_modules names the package; colony's own modules are not counted.
    const packages = urls.flatMap((url) => /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1] ?? []);
    return new Set(packages.filter((name) => name !== 'colony-harness'));
  };

  beforeAll(async () => {
    const base = mkdtempSync(join(tmpdir(), 'colony-install-'));
    // The sandboxed agents run as other users, who must get through to their workspaces.
    chmodSync(base, 0o755);
    home = join(base, 'home');
    prefix = join(base, 'prefix');
    away = join(base, 'away');
    for (const dir of [home, away]) mkdirSync(dir);
    const hooks = join(away, 'resolve-hooks.mjs');
    writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';\nexport async function resolve(specifier, context, next) {\n  const resolved = await next(specifier, context);\n  appendFileSync(${JSON.stringify(join(away, 'resolved.txt'))}, resolved.url + '\\n');\n  return resolved;\n}\n`,
    );
    writeFileSync(join(away, 'record-packages.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    npmEnv = { ...process.env, npm_config_better_sqlite3_local_prebuilds: packPrebuiltSqlite(join(base, 'prebuilds')) };
    await execFileAsync('npm', ['pack', '--silent', '--pack-destination', base], { cwd: CHECKOUT, encoding: 'utf8' });
    const packed = readdirSync(base).find((name) => name.endsWith('.tgz'));
    if (packed === undefined) throw new Error(`npm pack left no tarball in ${base}`);
    tarball = join(base, packed);
    await execFileAsync('npm', ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], {
      cwd: base,
      env: npmEnv,
      encoding: 'utf8',
    });
  }, 600_000);

  afterAll(() => {
    if (prefix !== undefined) rmSync(resolve(prefix, '..'), { recursive: true, force: true });
  });

  it('ships compiled JavaScript, the texts it reads and the examples, and no TypeScript', async () => {
    const { stdout } = await execFileAsync('tar', ['-tzf', tarball], { encoding: 'utf8' });
    const files = stdout.trim().split('\n');
    expect(files).toContain('package/dist/cli/bin.js');
    expect(files).toContain('package/dist/orchestrator/prompts/worker.md');
    expect(files).toContain('package/examples/toolbox/GOAL.md');
    expect(files.filter((file) => file.endsWith('.ts') || file.endsWith('.tsx'))).toEqual([]);
    expect(files.filter((file) => file.startsWith('package/dist/') && (file.includes('.test.') || file.includes('/testing/')))).toEqual([]);
    const installed = join(prefix, 'lib', 'node_modules', 'colony-harness');
    expect(existsSync(join(installed, 'node_modules', 'tsx'))).toBe(false);
  });

  it('answers --version and --help', async () => {
    expect((await colony(['--version'])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const help = (await colony(['--help'])).stdout;
    for (const name of ['run', 'resume', 'status', 'tui', 'demo', 'sim-server']) expect(help).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
  });

  it('runs from the tarball with npx, without an install', async () => {
    // npx keeps its own copy under the npm cache, and installs better-sqlite3 there as the install did.
    const { stdout } = await execFileAsync('npx', ['--yes', '--prefer-offline', '--package', tarball, '--', 'colony', '--version'], { cwd: away, env: npmEnv, encoding: 'utf8' });
    expect(stdout.trim()).toBe(JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')).version);
  }, 600_000);

  it('loads, for --help, no package but commander', async () => {
    expect([...(await packagesLoadedBy(['--help']))]).toEqual(['commander']);
  });

  it('checks the machine with colony doctor: every check passes or warns, without loading a model provider', async () => {
    const repo = join(away, 'doctor-repo');
    cpSync(join(prefix, 'lib', 'node_modules', 'colony-harness', 'examples', 'toolbox'), repo, { recursive: true });
    const git = (args: readonly string[]) => execFileAsync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo });
    await git(['init', '-q', '-b', 'main']);
    await git(['add', '-A']);
    await git(['commit', '-qm', 'the example']);
    // A failed check exits 1, and execFile rejects with what it printed.
    const { stdout } = await colony(['doctor'], repo);
    const lines = stdout.trimEnd().split('\n');
    expect(lines.filter((line) => !/^(pass|warn) {2}\S.*?: \S|^ {6}fix: \S/.test(line))).toEqual([lines.at(-1)]);
    expect(lines.at(-1)).toMatch(/^verdict: colony can run here \(\d+ checks, none failed/);
    for (const name of ['node', 'git', 'repository', 'repository path', 'state directory', 'disk', 'sandbox programs', 'cgroups', 'sandbox', 'model sim (workers, planners)']) {
      expect(lines.some((line) => line.startsWith(`pass  ${name}: `) || line.startsWith(`warn  ${name}: `))).toBe(true);
    }
    expect(JSON.parse((await colony(['doctor', '--json'], repo)).stdout)).toMatchObject({ ok: true });
    // The doctor leaves the repository as it found it: no state directory, no probe left behind.
    expect(readdirSync(repo)).not.toContain('.colony');
    expect(existsSync(defaultStateDir(repo))).toBe(false);
    const loaded = await packagesLoadedBy(['doctor', '--repo', repo]);
    expect([...loaded].filter((name) => name === 'ai' || name.startsWith('@ai-sdk/') || name === 'ink' || name === 'react')).toEqual([]);
  }, 120_000);

  it('runs the demo, and colony run of an example it ships, to done', async () => {
    const demo = await colony(['demo', '--dir', join(away, 'demo'), '--no-tui']);
    expect(demo.stdout).toMatch(/^ {2}\S.* merged [0-9a-f]{12} \(/m);
    expect(demo.stdout).toMatch(/: done in /);
    expect(demo.stdout).toMatch(/commits landed: 12\b/);

    const repo = join(away, 'text-kit');
    cpSync(join(prefix, 'lib', 'node_modules', 'colony-harness', 'examples', 'text-kit'), repo, { recursive: true });
    const git = (args: readonly string[]) => execFileAsync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo });
    await git(['init', '-q', '-b', 'main']);
    await git(['add', '-A']);
    await git(['commit', '-qm', 'the example']);
    const run = await colony(['run', 'GOAL.md', '--repo', '.', '--model', 'sim', '--workers', '4'], repo);
    expect(run.stdout).toMatch(/: done in /);
    const status = await colony(['status', '--repo', repo, '--json']);
    // The run landed on a branch of its own, and the user's main and checkout are as they were.
    expect(JSON.parse(status.stdout)).toMatchObject({ run: { state: 'done', trunk: 'colony/text-kit', checkedOut: 'main' } });
    expect(run.stdout).toContain('check on colony/text-kit: `node --test` passed');
    expect((await git(['rev-list', '--count', 'main'])).stdout.trim()).toBe('1');
    expect((await git(['status', '--porcelain'])).stdout).toBe('');
    expect((await git(['ls-tree', '-r', '--name-only', 'colony/text-kit'])).stdout).toContain('src/text/pad.js');
    // A status reads the store, and loads none of the model providers or the terminal UI, nor
    // the published zod: the package's own one-file build of it.
    const loaded = await packagesLoadedBy(['status', '--repo', repo]);
    for (const heavy of ['ai', '@ai-sdk/openai', '@ai-sdk/anthropic', 'ink', 'react', 'zod']) expect(loaded.has(heavy)).toBe(false);
    expect(loaded.has('better-sqlite3')).toBe(true);
  }, 300_000);
});
