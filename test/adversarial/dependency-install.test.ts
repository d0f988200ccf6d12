import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ColonyEvent } from '../../src/events/event-types.js';
import { DEFAULT_SANDBOX_UID_BASE } from '../../src/sandbox/sandbox.js';
import { createExampleRepository, runCli, type ExampleRepository } from '../testing/example-repository.js';

const isRoot = process.getuid?.() === 0;
const hasBubblewrap = existsSync('/usr/bin/bwrap');
const required = process.env['COLONY_REQUIRE_SANDBOX_TESTS'] === '1';

let repo: ExampleRepository;
let marker: string;

beforeEach(() => {
  repo = createExampleRepository('text-kit');
  marker = `/etc/colony-npm-escape-${process.pid}-${Date.now()}`;
});

afterEach(() => {
  rmSync(marker, { force: true });
  repo.cleanup();
});

/**
 * npm runs the program its `git` setting names to fetch a git dependency, `--ignore-scripts` or
 * not. A repository an agent wrote can set it in `.npmrc`; the shared install must then run it
 * confined, like any command an agent writes, never as the harness.
 */
function plantGitProgram(): void {
  // The program travels into the install's folder as a "local tarball" the lockfile names.
  mkdirSync(join(repo.dir, 'tools'));
  const program = join(repo.dir, 'tools', 'fake-git');
  writeFileSync(program, `#!/bin/sh\necho "fake git ran as uid $(id -u)" >&2\ntouch ${marker} 2>/dev/null && echo "wrote /etc" >&2\nexit 1\n`);
  chmodSync(program, 0o755);
  writeFileSync(join(repo.dir, '.npmrc'), 'git=./tools/fake-git\n');
  commitLockedProject(
    { y: 'git+https://example.invalid/y.git', z: 'file:tools/fake-git' },
    {
      'node_modules/y': { version: '1.0.0', resolved: 'git+ssh://git@example.invalid/y.git#0123456789abcdef0123456789abcdef01234567' },
      'node_modules/z': { version: '1.0.0', resolved: 'file:tools/fake-git' },
    },
    'a git dependency fetched by a program the repository names',
  );
}

/** Commits a package.json with `dependencies` and the lockfile that installs `locked`, node_modules ignored. */
function commitLockedProject(dependencies: Record<string, string>, locked: Record<string, { version: string; resolved: string }>, message: string): void {
  writeFileSync(join(repo.dir, 'package.json'), JSON.stringify({ name: 'text-kit', version: '1.0.0', dependencies }));
  const packages = { '': { name: 'text-kit', version: '1.0.0', dependencies }, ...locked };
  writeFileSync(join(repo.dir, 'package-lock.json'), JSON.stringify({ name: 'text-kit', version: '1.0.0', lockfileVersion: 3, requires: true, packages }));
  writeFileSync(join(repo.dir, '.gitignore'), 'node_modules/\n');
  repo.git('add', '-A');
  repo.git('commit', '-qm', message);
}

/** A lockfile that fetches its one package from a host that is no package registry. */
function lockOnAnotherHost(): void {
  commitLockedProject(
    { 'is-number': '7.0.0' },
    { 'node_modules/is-number': { version: '7.0.0', resolved: 'https://tarballs.example.com/is-number-7.0.0.tgz' } },
    'a package fetched from another host',
  );
}

async function eventsOfType<T extends ColonyEvent['type']>(type: T): Promise<Extract<ColonyEvent, { type: T }>[]> {
  const listed = (await runCli(['events', '--repo', repo.dir, '--json', '--type', type])).stdout.trim();
  return listed === '' ? [] : listed.split('\n').map((line) => JSON.parse(line) as Extract<ColonyEvent, { type: T }>);
}

describe.skipIf(!required && !(isRoot && hasBubblewrap))('the shared dependency install (needs root and bubblewrap)', () => {
  it('reaches the package registries and nothing else: a tarball on another host is refused, and the refusal recorded', async () => {
    lockOnAnotherHost();
    const result = await runCli(['work', join(repo.dir, 'tasks', '01-pad.md'), '--repo', repo.dir, '--model', 'sim?seed=3', '--json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/the setup failed before the worker started/);
    // npm's own words (a refused tunnel) do not say why; colony does.
    expect(result.stderr).toContain("The install asked for tarballs.example.com, which colony's setup does not reach");
    const requests = (await eventsOfType('network.requested')).map((event) => event.data);
    expect(requests).toContainEqual({ host: 'tarballs.example.com', port: 443, allowed: false, setup: true });
    expect(requests.filter((request) => request.allowed)).toEqual([]);
  });

  it('runs a program the repository names in the sandbox, as a uid of its own, never as the harness', async () => {
    plantGitProgram();
    const result = await runCli(['work', join(repo.dir, 'tasks', '01-pad.md'), '--repo', repo.dir, '--model', 'sim?seed=3', '--json']);
    // The install fails (the fetch program exits 1): the worker never starts.
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/the setup failed before the worker started/);
    const failed = await eventsOfType('dependencies.failed');
    const reason = failed[0]?.data.error ?? '';
    const uid = Number(/fake git ran as uid (\d+)/.exec(reason)?.[1]);
    expect(uid).toBeGreaterThanOrEqual(DEFAULT_SANDBOX_UID_BASE);
    expect(reason).not.toContain('wrote /etc');
    expect(existsSync(marker)).toBe(false);
  });
});
