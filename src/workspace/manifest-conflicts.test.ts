import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockfileConflictSettler, NPM_RELOCK_COMMAND } from './dependencies/lockfile-conflicts.js';
import { runInstallCommand, type InstallRequest, type RunInstall } from './dependencies/npm-install.js';
import { hasConflictMarkers } from './merge/conflict-markers.js';
import { mergeToMain, type MergeOutcome } from './merge/merge-to-main.js';
import { createMergeTestSetup, eventRecorder, type MergeTestSetup } from './testing/merge-setup.js';
import type { Workspace } from './workspace.js';

interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly dependencies: Record<string, string>;
}

const execFileAsync = promisify(execFile);

const BASE: Manifest = { name: 'demo', version: '1.0.0', dependencies: { 'is-number': '7.0.0' } };

/** A lockfile as npm writes one, pinning exactly what the manifest names. */
function lockfileFor(manifest: Manifest): string {
  const packages: Record<string, unknown> = { '': { name: manifest.name, version: manifest.version, dependencies: manifest.dependencies } };
  for (const [name, version] of Object.entries(manifest.dependencies)) packages[`node_modules/${name}`] = { version, resolved: `https://registry.npmjs.org/${name}/-/${name}-${version}.tgz` };
  return `${JSON.stringify({ name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`;
}

function manifestText(manifest: Manifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/**
 * npm as the settler runs it, standing in for the registry: it keeps what it was given to read
 * and writes the lockfile for the package.json it finds.
 */
function recordingNpm(failure: string | null = null): { readonly runInstall: RunInstall; readonly seen: { request: InstallRequest; files: Record<string, string> }[] } {
  const seen: { request: InstallRequest; files: Record<string, string> }[] = [];
  return {
    seen,
    runInstall: async (request) => {
      const files: Record<string, string> = {};
      for (const name of await readdir(request.dir)) files[name] = await readFile(join(request.dir, name), 'utf8');
      seen.push({ request, files });
      if (failure !== null) return { ok: false, error: failure };
      const manifest = JSON.parse(files['package.json'] ?? '{}') as Manifest;
      await writeFile(join(request.dir, 'package-lock.json'), lockfileFor(manifest));
      return { ok: true };
    },
  };
}

function withDependency(name: string, version: string): Manifest {
  return { ...BASE, dependencies: { ...BASE.dependencies, [name]: version } };
}

describe('merging a package.json and lockfile both workers changed', () => {
  let setup: MergeTestSetup;
  let second: Workspace;
  let mainBefore: string;
  let stagingDir: string;

  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'package.json': manifestText(BASE), 'package-lock.json': lockfileFor(BASE), '.npmrc': 'registry=https://registry.example.test/\n' });
    stagingDir = join(setup.temporary.base, 'staging');
    const first = await setup.workspace('first');
    second = await setup.workspace('second');
    const kindOf = withDependency('kind-of', '6.0.3');
    await setup.temporary.write('package.json', manifestText(kindOf), first.path);
    await setup.temporary.write('package-lock.json', lockfileFor(kindOf), first.path);
    const landed = await mergeToMain(setup.repo, first, { message: 'Use kind-of' });
    if (landed.status !== 'landed') throw new Error(JSON.stringify(landed));
    mainBefore = landed.commit;
    const isOdd = withDependency('is-odd', '3.0.1');
    await setup.temporary.write('package.json', manifestText(isOdd), second.path);
    await setup.temporary.write('package-lock.json', lockfileFor(isOdd), second.path);
  });

  afterEach(async () => {
    await setup.temporary.remove();
  });

  it('lands both packages: package.json merged key by key, the lockfile written again by npm from main’s', async () => {
    const npm = recordingNpm();
    const recorder = eventRecorder();
    const settleConflicts = lockfileConflictSettler({ stagingDir, runInstall: npm.runInstall });
    const outcome = await mergeToMain(setup.repo, second, { message: 'Use is-odd', record: recorder.record, settleConflicts });
    expect(outcome).toMatchObject({ status: 'landed', mainBefore, autoResolved: ['package-lock.json', 'package.json'] });
    const both: Manifest = { ...BASE, dependencies: { 'is-number': '7.0.0', 'is-odd': '3.0.1', 'kind-of': '6.0.3' } };
    const commit = (outcome as Extract<MergeOutcome, { status: 'landed' }>).commit;
    expect(await setup.temporary.git(['show', `${commit}:package.json`])).toBe(manifestText(both));
    expect(await setup.temporary.git(['show', `${commit}:package-lock.json`])).toBe(lockfileFor(both));
    // npm was given the merged package.json, main's lockfile and the project's .npmrc, and nothing else.
    expect(npm.seen).toHaveLength(1);
    expect(npm.seen[0]?.request.command).toBe(NPM_RELOCK_COMMAND);
    expect(npm.seen[0]?.files).toEqual({ 'package.json': manifestText(both), 'package-lock.json': lockfileFor(withDependency('kind-of', '6.0.3')), '.npmrc': 'registry=https://registry.example.test/\n' });
    expect(await readdir(stagingDir)).toEqual([]);
    expect(recorder.events.some((event) => event.type === 'merge.conflicted')).toBe(false);
  });

  it('leaves both files to the agent, saying why, when npm fails', async () => {
    const npm = recordingNpm('npm install failed (exit 1): npm error 404 Not Found - GET https://registry.example.test/is-odd');
    const recorder = eventRecorder();
    const outcome = await mergeToMain(setup.repo, second, { message: 'Use is-odd', record: recorder.record, settleConflicts: lockfileConflictSettler({ stagingDir, runInstall: npm.runInstall }) });
    expect(outcome).toMatchObject({ status: 'conflicted', files: ['package-lock.json', 'package.json'], mainBefore, unsettled: expect.stringContaining('404 Not Found') });
    expect(hasConflictMarkers(await setup.temporary.read('package.json', second.path))).toBe(true);
    expect(recorder.events.at(-1)).toMatchObject({ type: 'merge.conflicted', data: { unsettled: expect.stringContaining('npm could not write package-lock.json') } });
    expect(await setup.mainCommit()).toBe(mainBefore);
  });

  it('leaves package.json to the agent when both sides pin one package differently, without running npm', async () => {
    const npm = recordingNpm();
    await setup.temporary.write('package.json', manifestText(withDependency('kind-of', '5.1.0')), second.path);
    const outcome = await mergeToMain(setup.repo, second, { message: 'Use an older kind-of', settleConflicts: lockfileConflictSettler({ stagingDir, runInstall: npm.runInstall }) });
    expect(outcome).toMatchObject({ status: 'conflicted', unsettled: "the two sides' changes to package.json touch the same keys differently" });
    expect(npm.seen).toEqual([]);
  });
});

/** Each manager's own lockfile for a package.json, written as the project's author would (with the network, outside any sandbox). */
const MANAGERS = [
  { lockfile: 'pnpm-lock.yaml', packageManager: 'pnpm@10.34.5', lock: ['--package=pnpm@10.34.5', '--', 'pnpm', 'install', '--lockfile-only', '--ignore-scripts'], env: {} },
  {
    lockfile: 'yarn.lock',
    packageManager: 'yarn@4.18.1',
    lock: ['--package=@yarnpkg/cli-dist@4.18.1', '--', 'yarn', 'install', '--mode=update-lockfile'],
    env: { YARN_ENABLE_TELEMETRY: '0', YARN_ENABLE_GLOBAL_CACHE: 'true', YARN_IGNORE_PATH: '1' },
  },
] as const;

describe.each(MANAGERS)('merging a package.json and $lockfile both workers changed', ({ lockfile, packageManager, lock, env }) => {
  const relockTimeoutMs = 120_000;
  let setup: MergeTestSetup;

  const writeLocked = async (dir: string, manifest: Manifest): Promise<void> => {
    await writeFile(join(dir, 'package.json'), manifestText({ ...manifest, packageManager } as Manifest));
    await execFileAsync('npm', ['exec', '--yes', ...lock], { cwd: dir, env: { ...process.env, ...env } });
  };

  beforeEach(async () => {
    setup = await createMergeTestSetup({ '.gitignore': 'node_modules/\n.yarn/\n.pnp.*\n' });
    await writeLocked(setup.temporary.root, BASE);
    await setup.temporary.commitAll('a locked project');
  }, relockTimeoutMs);

  afterEach(async () => {
    await setup.temporary.remove();
  });

  it('lands both packages, the lockfile written again by the manager and version the project pins', { timeout: relockTimeoutMs }, async () => {
    const first = await setup.workspace('first');
    const second = await setup.workspace('second');
    await writeLocked(first.path, withDependency('kind-of', '6.0.3'));
    const landed = await mergeToMain(setup.repo, first, { message: 'Use kind-of' });
    expect(landed.status).toBe('landed');
    await writeLocked(second.path, withDependency('is-odd', '3.0.1'));
    const stagingDir = join(setup.temporary.base, 'staging');
    const outcome = await mergeToMain(setup.repo, second, { message: 'Use is-odd', settleConflicts: lockfileConflictSettler({ stagingDir, runInstall: runInstallCommand }) });
    expect(outcome).toMatchObject({ status: 'landed', autoResolved: ['package.json', lockfile].sort() });
    const commit = (outcome as Extract<MergeOutcome, { status: 'landed' }>).commit;
    const merged = JSON.parse(await setup.temporary.git(['show', `${commit}:package.json`])) as Manifest;
    expect(merged.dependencies).toEqual({ 'is-number': '7.0.0', 'is-odd': '3.0.1', 'kind-of': '6.0.3' });
    const written = await setup.temporary.git(['show', `${commit}:${lockfile}`]);
    for (const name of ['is-number', 'is-odd', 'kind-of']) expect(written).toContain(name);
    expect(hasConflictMarkers(written)).toBe(false);
    // The lockfile is the one the manager would write: installing from it as it is succeeds.
    const check = await setup.workspace('check');
    await execFileAsync('npm', ['exec', '--yes', ...lock.slice(0, 3), 'install', ...(lockfile === 'yarn.lock' ? ['--immutable', '--mode=skip-build'] : ['--frozen-lockfile', '--lockfile-only'])], {
      cwd: check.path,
      env: { ...process.env, ...env },
    });
  });
});
