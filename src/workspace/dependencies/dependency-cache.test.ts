import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, readdir, symlink, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { prepareDependencyLayer, type DependencyLayer } from './dependency-cache.js';
import { installEnvironment, NPM_INSTALL_COMMAND, runInstallCommand, type InstallRequest, type RunInstall } from './npm-install.js';
import { createNodeProject, type NodeProject } from '../testing/node-project.js';

const execFileAsync = promisify(execFile);

const TIMEOUT_MS = 120_000;

/** One project for the file; each test gets its own empty cache and leaves the repository as it found it. */
let project: NodeProject;
let cacheDir: string;
let cacheCount = 0;

beforeAll(async () => {
  project = await createNodeProject();
}, TIMEOUT_MS);

afterAll(async () => {
  await project.remove();
});

beforeEach(() => {
  cacheCount += 1;
  cacheDir = `${project.cacheDir}-${cacheCount}`;
});

afterEach(async () => {
  await project.temporary.git(['reset', '--quiet', '--hard', project.commit]);
  await project.temporary.git(['clean', '--quiet', '-fdx']);
});

/** The real `npm ci`, counting its runs and keeping what it was asked. */
function countingInstall(): { readonly runInstall: RunInstall; readonly requests: InstallRequest[] } {
  const requests: InstallRequest[] = [];
  return {
    requests,
    runInstall: (request) => {
      requests.push(request);
      return runInstallCommand(request);
    },
  };
}

function expectLayer(layer: DependencyLayer): Extract<DependencyLayer, { ok: true }> {
  if (!layer.ok) throw new Error(`expected a layer, got: ${layer.error}`);
  return layer;
}

async function layerFolders(cacheDir: string): Promise<string[]> {
  return (await readdir(cacheDir)).filter((name) => /^[0-9a-f]{64}$/.test(name));
}

describe('prepareDependencyLayer', { timeout: TIMEOUT_MS }, () => {
  it('installs the first time and reuses the layer the second time without running npm', async () => {
    const install = countingInstall();
    const first = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit, runInstall: install.runInstall }));
    expect(first.reused).toBe(false);
    expect(first.layerDir).toBe(join(cacheDir, first.key));
    expect(await readdir(first.layerDir)).toEqual(['node_modules']);
    expect(await readFile(join(first.layerDir, 'node_modules/x/index.js'), 'utf8')).toContain('x 1.0.0');
    expect(first.bytes).toBeGreaterThan(0);
    const inodeBefore = (await stat(join(first.layerDir, 'node_modules/x/index.js'))).ino;

    const second = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit, runInstall: install.runInstall }));
    expect(second).toEqual({ ...first, reused: true });
    expect(install.requests).toHaveLength(1);
    expect((await stat(join(first.layerDir, 'node_modules/x/index.js'))).ino).toBe(inodeBefore);
    expect(await readdir(join(cacheDir, '.staging'))).toEqual([]);
  });

  it('makes one layer when several callers prepare the same commit at once', async () => {
    const install = countingInstall();
    const layers = await Promise.all(
      [1, 2, 3].map(() => prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit, runInstall: install.runInstall })),
    );
    expect(install.requests).toHaveLength(1);
    const keys = new Set(layers.map((layer) => expectLayer(layer).key));
    expect(keys.size).toBe(1);
    expect(layers.filter((layer) => layer.ok && !layer.reused)).toHaveLength(1);
    expect(await layerFolders(cacheDir)).toEqual([...keys]);
  });

  it('makes one layer when two processes prepare the same commit at once', async () => {
    const child = new URL('../testing/prepare-layer-child.ts', import.meta.url).pathname;
    const runChild = async () => {
      const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', child, project.repo.root, cacheDir, project.commit]);
      return expectLayer(JSON.parse(stdout) as DependencyLayer);
    };
    const [first, second] = await Promise.all([runChild(), runChild()]);
    expect(first?.key).toBe(second?.key);
    // Whoever lost the race (or came second) took the other's layer.
    expect([first?.reused, second?.reused]).toContain(false);
    expect(await layerFolders(cacheDir)).toEqual([first?.key]);
    expect(await readdir(join(cacheDir, first?.key ?? ''))).toEqual(['node_modules']);
    expect(await readFile(join(first?.layerDir ?? '', 'node_modules/x/index.js'), 'utf8')).toContain('x 1.0.0');
    expect(await readdir(join(cacheDir, '.staging'))).toEqual([]);
  });

  it('lets the loser of the rename race use the winner’s layer', async () => {
    // Two names for one cache folder defeat the in-process sharing, so both callers install.
    await mkdir(cacheDir, { recursive: true });
    const alias = `${cacheDir}-alias`;
    await symlink(cacheDir, alias);
    const requests: InstallRequest[] = [];
    let release = (): void => undefined;
    const bothInstalled = new Promise<void>((resolve) => (release = resolve));
    const runInstall: RunInstall = async (request) => {
      requests.push(request);
      const result = await runInstallCommand(request);
      if (requests.length === 2) release();
      // Neither renames its install into place before both have one.
      await bothInstalled;
      return result;
    };
    const layers = await Promise.all([cacheDir, alias].map((folder) => prepareDependencyLayer(project.repo, { cacheDir: folder, commit: project.commit, runInstall })));
    expect(requests).toHaveLength(2);
    expect(layers.map((layer) => expectLayer(layer).reused).sort()).toEqual([false, true]);
    expect(await layerFolders(cacheDir)).toEqual([expectLayer(layers[0] as DependencyLayer).key]);
    expect(await readdir(join(cacheDir, '.staging'))).toEqual([]);
  });

  it('gives a changed lockfile a new key and a new layer', async () => {
    const first = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit }));
    const changed = await project.dependOnVersion('1.1.0', 'x 1.1.0');
    const second = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: changed }));
    expect(second.key).not.toBe(first.key);
    expect(second.reused).toBe(false);
    expect(await readFile(join(second.layerDir, 'node_modules/x/index.js'), 'utf8')).toContain('x 1.1.0');
    expect(await readFile(join(first.layerDir, 'node_modules/x/index.js'), 'utf8')).toContain('x 1.0.0');
    expect((await layerFolders(cacheDir)).sort()).toEqual([first.key, second.key].sort());
  });

  it("reports a failing install with npm's reason and leaves no half layer", async () => {
    // Garbage whose integrity the lockfile vouches for: npm must open it (no cache holds it) and fail.
    const garbage = 'this is not a tarball';
    await writeFile(join(project.temporary.root, 'deps/x-1.0.0.tgz'), garbage);
    const lockfilePath = join(project.temporary.root, 'package-lock.json');
    const lockfile = JSON.parse(await readFile(lockfilePath, 'utf8')) as { packages: Record<string, { integrity?: string }> };
    const entry = lockfile.packages['node_modules/x'];
    if (entry === undefined) throw new Error('the fixture lockfile has no node_modules/x');
    entry.integrity = `sha512-${createHash('sha512').update(garbage).digest('base64')}`;
    await writeFile(lockfilePath, JSON.stringify(lockfile, null, 2));
    const broken = await project.temporary.commitAll('Break the tarball');
    const layer = await prepareDependencyLayer(project.repo, { cacheDir, commit: broken });
    expect(layer.ok).toBe(false);
    if (layer.ok) return;
    expect(layer.stopsRun).toBe(true);
    expect(layer.error).toMatch(/npm could not install/);
    // npm's own words about the archive it could not read.
    expect(layer.error).toMatch(/TAR_BAD_ARCHIVE/);
    expect(await layerFolders(cacheDir)).toEqual([]);
    expect(await readdir(join(cacheDir, '.staging'))).toEqual([]);
  });

  it("runs a project's own setup once per hash of its inputs, keeping what it made beside them", async () => {
    const install = countingInstall();
    const setup = { command: 'mkdir .venv && wc -c < package.json > .venv/manifest-bytes && echo changed >> package.json', inputs: ['package.json', 'deps'] };
    const first = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit, setup, runInstall: install.runInstall }));
    expect(first.reused).toBe(false);
    // What it made, not its inputs nor the input it changed.
    expect(await readdir(first.layerDir)).toEqual(['.venv']);
    const manifest = await readFile(join(project.temporary.root, 'package.json'), 'utf8');
    expect((await readFile(join(first.layerDir, '.venv/manifest-bytes'), 'utf8')).trim()).toBe(String(Buffer.byteLength(manifest)));
    expect(install.requests.map((request) => request.command)).toEqual([setup.command]);
    expect(await readdir(join(cacheDir, '.staging'))).toEqual([]);

    const again = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit, setup, runInstall: install.runInstall }));
    expect(again).toEqual({ ...first, reused: true });
    expect(install.requests).toHaveLength(1);

    // A file outside the inputs leaves the key alone; a change to an input makes a new layer.
    await writeFile(join(project.temporary.root, 'README.md'), 'words\n');
    const unrelated = await project.temporary.commitAll('Add a readme');
    expect(expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: unrelated, setup, runInstall: install.runInstall })).key).toBe(first.key);
    await writeFile(join(project.temporary.root, 'package.json'), manifest.replace('"1.0.0"', '"1.0.1"'));
    const changed = await project.temporary.commitAll('Bump the version');
    const next = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: changed, setup, runInstall: install.runInstall }));
    expect(next.key).not.toBe(first.key);
    expect(install.requests).toHaveLength(2);
  });

  it("stops the run for a setup whose input is missing, that fails, or that makes nothing", async () => {
    const missing = await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit, setup: { command: 'true', inputs: ['uv.lock'] } });
    expect(missing).toEqual({ ok: false, stopsRun: true, error: expect.stringMatching(/^setup-inputs names uv\.lock, which is not in commit [0-9a-f]{12}/) });
    const failing = await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit, setup: { command: 'echo "no such index" >&2; exit 3', inputs: ['package.json'] } });
    expect(failing).toEqual({ ok: false, stopsRun: true, error: expect.stringMatching(/^the setup command failed at [0-9a-f]{12}: .*exit 3.*no such index/s) });
    const idle = await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit, setup: { command: 'true', inputs: ['package.json'] } });
    expect(idle).toEqual({ ok: false, stopsRun: true, error: expect.stringMatching(/made nothing beside its inputs/) });
    expect(await layerFolders(cacheDir)).toEqual([]);
  });

  it('installs a package without a lockfile from package.json alone, once per package.json, writing nothing into the repository', async () => {
    await project.temporary.git(['rm', '--quiet', '-r', 'package-lock.json', 'deps']);
    // A real package from the registry: no lockfile means npm resolves it there.
    const manifest = { name: 'node-project', version: '1.0.0', private: true, dependencies: { 'is-number': '^7.0.0' } };
    await writeFile(join(project.temporary.root, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    const commit = await project.temporary.commitAll('Depend on is-number, with no lockfile');
    const install = countingInstall();
    const layer = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit, runInstall: install.runInstall }));
    expect(install.requests.map((request) => request.command)).toEqual([NPM_INSTALL_COMMAND]);
    const installed = JSON.parse(await readFile(join(layer.layerDir, 'node_modules/is-number/package.json'), 'utf8')) as { version: string };
    expect(installed.version).toMatch(/^7\./);
    // What npm resolved stays with the layer, as node_modules/.package-lock.json.
    const resolved = JSON.parse(await readFile(join(layer.layerDir, 'node_modules/.package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    expect(Object.keys(resolved.packages)).toContain('node_modules/is-number');
    expect(await project.temporary.git(['status', '--porcelain', '--ignored'])).toBe('');

    expect(expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit, runInstall: install.runInstall })).reused).toBe(true);
    expect(install.requests).toHaveLength(1);
    await writeFile(join(project.temporary.root, 'package.json'), `${JSON.stringify({ ...manifest, description: 'changed' }, null, 2)}\n`);
    const changed = await project.temporary.commitAll('Change package.json');
    expect(expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: changed })).key).not.toBe(layer.key);
  });

  it('says why there is no layer for a project without a lockfile that installs from its own folders', async () => {
    await project.temporary.git(['rm', '--quiet', 'package-lock.json']);
    const commit = await project.temporary.commitAll('Drop the lockfile');
    const layer = await prepareDependencyLayer(project.repo, { cacheDir, commit });
    expect(layer).toEqual({ ok: false, stopsRun: false, error: expect.stringMatching(/installs x from file:\.\/deps\/x-1\.0\.0\.tgz.*commit a package-lock\.json/) });
  });

  it('says why there is no layer for a repository without package.json', async () => {
    await project.temporary.git(['rm', '--quiet', 'package.json', 'package-lock.json']);
    const commit = await project.temporary.commitAll('Not a node project');
    const layer = await prepareDependencyLayer(project.repo, { cacheDir, commit });
    expect(layer).toEqual({ ok: false, stopsRun: false, error: 'the repository has no package.json at its root' });
  });

  it('reads the commit, not the checkout', async () => {
    await writeFile(join(project.temporary.root, 'package-lock.json'), 'not json, and not committed');
    const layer = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit }));
    expect(await readFile(join(layer.layerDir, 'node_modules/x/index.js'), 'utf8')).toContain('x 1.0.0');
  });

  it('replaces a layer whose files were changed in place since it was made', async () => {
    const install = countingInstall();
    const first = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit, runInstall: install.runInstall }));
    const shared = join(first.layerDir, 'node_modules/x/index.js');
    // What a write through a hard link in some workspace does when the read-only mode does not
    // stop it (root ignores it).
    await chmod(shared, 0o644);
    await writeFile(shared, 'module.exports = "tampered";\n');
    const second = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit, runInstall: install.runInstall }));
    expect(second.reused).toBe(false);
    expect(install.requests).toHaveLength(2);
    expect(await readFile(join(second.layerDir, 'node_modules/x/index.js'), 'utf8')).toContain('x 1.0.0');
  });

  it('makes the files of a layer read-only', async () => {
    const layer = expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit }));
    const mode = (await stat(join(layer.layerDir, 'node_modules/x/index.js'))).mode;
    expect(mode & 0o222).toBe(0);
  });

  it('gives npm no API key from the environment', async () => {
    const install = countingInstall();
    const environment = { ...process.env, OPENAI_API_KEY: 'sk-secret', ANTHROPIC_API_KEY: 'secret', COLONY_MODEL_API_KEY: 'secret', GITHUB_TOKEN: 'secret' };
    expectLayer(await prepareDependencyLayer(project.repo, { cacheDir, commit: project.commit, runInstall: install.runInstall, environment }));
    const passed = install.requests[0]?.environment ?? {};
    expect(Object.keys(passed).filter((name) => /_API_KEY$/i.test(name) || /TOKEN/.test(name))).toEqual([]);
    expect(passed.PATH).toBe(process.env.PATH);
    expect(passed.npm_config_update_notifier).toBe('false');
  });

  it('passes the allow-listed variables and npm configuration, nothing else', () => {
    const environment = installEnvironment({ PATH: '/bin', HOME: '/home/a', npm_config_registry: 'http://registry.invalid/', npm_package_name: 'colony', SECRET_API_KEY: 'x', NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt' });
    expect(environment.HOME).toBe('/home/a');
    expect(environment.NODE_EXTRA_CA_CERTS).toBe('/etc/ssl/certs/ca-certificates.crt');
    expect(environment.npm_config_registry).toBe('http://registry.invalid/');
    expect(environment.npm_package_name).toBeUndefined();
    expect(environment.SECRET_API_KEY).toBeUndefined();
  });
});
