import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openHostMirror } from '../src/orchestrator/setup/host-mirror.js';
import { openRepository, type Repository } from '../src/workspace/git/repository.js';
import { closeRepositoryObjects } from '../src/workspace/git/repository-objects.js';
import { publishTrunk, trunkOriginOf } from '../src/workspace/git/trunk-origin.js';
import { mergeToMain } from '../src/workspace/merge/merge-to-main.js';
import { createWorktreeProvider } from '../src/workspace/providers/worktree/worktree-provider.js';
import { createTemporaryRepository } from '../src/workspace/testing/temporary-repository.js';
import { startGitHttpOrigin } from '../test/testing/git-http-origin.js';
import type { BenchRow, BenchSection, BenchSettings } from './bench-row.js';

const MERGERS = 64;
const HOSTS = 3;
const TRUNK = 'trunk';

/** What one timed round of merging gave: landings, merges that failed, and how often a landing had to try again. */
interface Round {
  readonly landed: number;
  readonly failed: number;
  readonly retried: number;
  readonly seconds: number;
}

/**
 * Landing on an origin over git's smart HTTP, against landing on one repository: 64 mergers,
 * each landing one small change after another on a file of its own, for `seconds`. On one
 * repository they share one machine's main (a compare-and-swap `update-ref`); over the origin
 * they are spread over 3 hosts, each with its own copy, landing by `git push --force-with-lease`
 * to nginx + fcgiwrap + `git http-backend` (the documented origin), a refused push fetching and
 * replaying again. The three hosts run in this process, so they share its CPU with nginx and git.
 */
export async function benchOriginMerges(settings: BenchSettings): Promise<BenchSection> {
  const seconds = settings.seconds ?? 20;
  const local = await localRound(seconds);
  const remote = await originRound(seconds);
  const perHour = (round: Round) => (round.landed / round.seconds) * 3600;
  const rows: BenchRow[] = [
    { name: `${MERGERS} mergers on one repository`, value: perHour(local), unit: 'merges/h', note: `${local.landed} landed in ${local.seconds.toFixed(1)} s, ${local.failed} failed; the single-machine path` },
    {
      name: `${MERGERS} mergers on ${HOSTS} hosts, landing on an origin over smart HTTP`,
      value: perHour(remote),
      unit: 'merges/h',
      target: '≥ 20,000 merges/h',
      note: `${remote.landed} landed in ${remote.seconds.toFixed(1)} s, ${remote.failed} failed, ${remote.retried} needed another push after another host landed first`,
    },
    { name: 'origin over HTTP against one repository', value: (perHour(remote) / perHour(local)) * 100, unit: '%' },
  ];
  return {
    rows,
    details: [
      'Every landing is a real merge: the change committed, replayed onto the trunk in process and',
      "moved there by a compare-and-swap; over the origin that swap is a push naming the tip replayed",
      "onto, one at a time per host (the host's turn on main), with a refused push fetching the",
      "origin's trunk and replaying again within the turn.",
    ].join('\n'),
  };
}

/** A scratch repository with a trunk, in a directory of its own. */
async function scratch() {
  const temporary = await createTemporaryRepository({ 'README.md': '# bench\n' });
  await temporary.git(['branch', TRUNK]);
  return temporary;
}

async function localRound(seconds: number): Promise<Round> {
  const temporary = await scratch();
  try {
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    const repo = { ...opened.repo, mainBranch: TRUNK };
    try {
      return await mergeFor(seconds, Array.from({ length: MERGERS }, () => repo), join(realpathSync(temporary.base), 'workspaces'));
    } finally {
      await closeRepositoryObjects(repo);
    }
  } finally {
    await temporary.remove();
  }
}

async function originRound(seconds: number): Promise<Round> {
  const temporary = await scratch();
  const server = await startGitHttpOrigin();
  const hostsDir = mkdtempSync(join(tmpdir(), 'colony-bench-hosts-'));
  const hosts: Repository[] = [];
  try {
    server.repository('bench');
    const parsed = trunkOriginOf(server.urlWithPassword('bench'));
    if (!parsed.ok) throw new Error(parsed.error);
    const opened = await openRepository(temporary.root);
    if (!opened.ok) throw new Error(opened.error);
    const start = (await temporary.git(['rev-parse', TRUNK])).trim();
    const published = await publishTrunk({ ...opened.repo, mainBranch: TRUNK }, parsed.origin, start);
    if (!published.ok) throw new Error(published.error);
    for (let host = 0; host < HOSTS; host += 1) {
      const mirror = await openHostMirror(join(hostsDir, `host-${host}`), parsed.origin, TRUNK);
      if (!mirror.ok) throw new Error(mirror.error);
      hosts.push(mirror.repo);
    }
    return await mergeFor(seconds, Array.from({ length: MERGERS }, (_, index) => hosts[index % HOSTS] as Repository), join(hostsDir, 'workspaces'));
  } finally {
    for (const host of hosts) await closeRepositoryObjects(host);
    await server.stop();
    rmSync(hostsDir, { recursive: true, force: true });
    await temporary.remove();
  }
}

/** Each merger lands one change after another on `repos[index]` until `seconds` have passed. */
async function mergeFor(seconds: number, repos: readonly Repository[], parentDir: string): Promise<Round> {
  mkdirSync(parentDir, { recursive: true });
  const workspaces = await Promise.all(repos.map((repo, index) => createWorktreeProvider(repo).create({ id: `m${index}`, parentDir })));
  let landed = 0;
  let failed = 0;
  let retried = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    workspaces.map(async (workspace, index) => {
      const repo = repos[index] as Repository;
      for (let change = 0; performance.now() < deadline; change += 1) {
        writeFileSync(join(workspace.path, `m${index}.txt`), `change ${change}\n`);
        const outcome = await mergeToMain(repo, workspace, { message: `Change ${change} of merger ${index}` });
        if (outcome.status === 'landed') {
          landed += 1;
          if (outcome.attempts > 1) retried += 1;
        } else failed += 1;
      }
    }),
  );
  return { landed, failed, retried, seconds: (performance.now() - started) / 1000 };
}
