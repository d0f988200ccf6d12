import { execFile } from 'node:child_process';
import { mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openRepository, type Repository } from '../git/repository.js';
import { createTemporaryRepository, type TemporaryRepository } from './temporary-repository.js';

const execFileAsync = promisify(execFile);

/**
 * A real Node project in a real git repository whose one dependency, `x`, is installed from a
 * local tarball committed under `deps/` (`"x": "file:./deps/x-<version>.tgz"`), so real npm
 * installs it without any network. The lockfile is the one `npm install` wrote.
 */
export interface NodeProject {
  readonly temporary: TemporaryRepository;
  readonly repo: Repository;
  /** The commit holding package.json, the lockfile and the tarball. */
  readonly commit: string;
  /** An empty folder beside the repository, on the same file system, for the layer cache. */
  readonly cacheDir: string;
  /** Where workspaces of this repository are made. */
  readonly workspacesDir: string;
  /** Packs `x` at `version` (exporting `value`), depends on that, runs `npm install` and commits; returns the commit. */
  dependOnVersion(version: string, value: string): Promise<string>;
  remove(): Promise<void>;
}

/** Runs npm for the fixture, with the test's own environment. Throws with npm's output when it fails. */
export async function npm(args: readonly string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync('npm', [...args], { cwd, env: { ...process.env, npm_config_update_notifier: 'false' } });
    return stdout;
  } catch (error) {
    const output = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}: ${output.stderr ?? ''}${output.stdout ?? ''}${output.message}`, { cause: error });
  }
}

export async function createNodeProject(options: { readonly ignoreNodeModules?: boolean } = {}): Promise<NodeProject> {
  const files: Record<string, string> = { 'README.md': '# a node project\n', 'index.js': "console.log(require('x'));\n" };
  if (options.ignoreNodeModules !== false) files['.gitignore'] = 'node_modules/\n';
  const temporary = await createTemporaryRepository(files);
  const opened = await openRepository(temporary.root);
  if (!opened.ok) throw new Error(opened.error);
  const base = await realpath(temporary.base);

  const dependOnVersion = async (version: string, value: string): Promise<string> => {
    const source = join(base, 'package-source', version);
    await mkdir(source, { recursive: true });
    await writeFile(join(source, 'package.json'), JSON.stringify({ name: 'x', version, main: 'index.js' }));
    await writeFile(join(source, 'index.js'), `module.exports = ${JSON.stringify(value)};\n`);
    await mkdir(join(temporary.root, 'deps'), { recursive: true });
    await npm(['pack', '--silent', '--pack-destination', join(temporary.root, 'deps')], source);
    const manifest = { name: 'node-project', version: '1.0.0', private: true, dependencies: { x: `file:./deps/x-${version}.tgz` } };
    await writeFile(join(temporary.root, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    await npm(['install', '--ignore-scripts', '--no-audit', '--no-fund'], temporary.root);
    // The checkout's own install is not part of the test: layers come from the commit.
    await rm(join(temporary.root, 'node_modules'), { recursive: true, force: true });
    return temporary.commitAll(`Depend on x ${version}`);
  };

  const commit = await dependOnVersion('1.0.0', 'x 1.0.0');
  const cacheDir = join(base, 'dependency-layers');
  return {
    temporary,
    repo: opened.repo,
    commit,
    cacheDir,
    workspacesDir: join(base, 'workspaces'),
    dependOnVersion,
    remove: () => temporary.remove(),
  };
}
