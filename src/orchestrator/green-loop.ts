import type { ColonyEvent, EventBody } from '../events/event-types.js';
import type { EventStore } from '../store/event-store.js';
import type { TaskStore } from '../store/task-store.js';
import { runGit } from '../workspace/git.js';
import { advanceGreenBranch, tagGreen } from '../workspace/green-branch.js';
import type { Repository } from '../workspace/repository.js';
import { resolveBranch } from '../workspace/workspace.js';
import type { CommandRunners } from './command-sandbox.js';
import { checkCommandAt } from './green-check-command.js';
import { traceNewFailures, type FailureOrigin } from './green-failures.js';
import { releaseRefusal, tellOrigins } from './green-report.js';
import type { GreenSettings } from './green-settings.js';
import { checkCommit, type SnapshotCheck } from './green-snapshot.js';
import { restoreGreenState, type GreenState, type OpenFailure } from './green-state.js';
import type { PromptSet } from './prompt-set.js';
import type { Wakeups } from './wakeups.js';

/** The wake-up key of the green loop: a landing that reaches the count, or a request. */
export const GREEN_WAKEUP = 'green-loop';
/** The loop looks at the clock at least this often, for the interval and for another process's request. */
const POLL_MS = 1_000;
/** Check results kept for bisects, by command and commit; the oldest go past this. */
const CACHED_CHECKS = 500;

export interface GreenLoopOptions {
  readonly runId: string;
  readonly repo: Repository;
  readonly events: EventStore;
  readonly tasks: TaskStore;
  readonly rootTaskId: string;
  /** Snapshots and bisect probes check out main in views made in here. */
  readonly viewsDir: string;
  readonly commands: CommandRunners;
  /** The run's shared install of the project's dependencies, linked into every view checked; null for none. */
  readonly dependencyLayer: string | null;
  readonly prompts: PromptSet;
  readonly settings: GreenSettings;
  /** The run's system recorder. */
  readonly record: (body: EventBody) => void;
  readonly flush: () => void;
  /** The goal as it stands now (its colony-spec may name the check). */
  readonly goal: () => string;
  /** The trunk's commit when the run started. */
  readonly base: string;
  /** Commits a bisect checks at once. */
  readonly parallel: number;
  readonly wakeups: Wakeups;
  readonly now: () => number;
  readonly signal: AbortSignal;
}

/** What the release snapshot said: a run ends done only when it passed (or no check is known). */
export interface ReleaseVerdict {
  readonly passed: boolean;
  /** The snapshot; null when no check command is known, so there was nothing to run. */
  readonly check: SnapshotCheck | null;
  /** For a root planner's done `finish` while it fails: why, and what to do (prompts/release-refused.md). */
  readonly refusal: string | null;
}

export interface GreenLoop {
  /** Every event of the run, as it is recorded: landings count toward the next snapshot. */
  observe(event: ColonyEvent): void;
  /** A snapshot as soon as the one going (if any) is over (`colony green --now` on a live run). */
  request(): void;
  /** A snapshot now, after the one going (if any): what it found, or null when there was nothing to check. */
  checkNow(): Promise<GreenSnapshot | null>;
  /** The release snapshot of main as it is now; one already taken of the same commit is not taken again. */
  release(): Promise<ReleaseVerdict>;
  /** Stops the loop, killing a check in flight; the green branch stays where the last passing snapshot put it. */
  stop(): Promise<void>;
}

type Trigger = 'landings' | 'interval' | 'release' | 'request';

/** One snapshot and the failures open after it (none when it passed). */
export interface GreenSnapshot {
  readonly check: SnapshotCheck;
  readonly open: readonly OpenFailure[];
}

/**
 * The green loop of one run (decision 0029). It snapshots main after enough landings or time,
 * runs the project's check there, moves the green branch forward on a pass, and on a failure
 * bisects each new failure to the commit that brought it and tells the planner that owns that
 * commit's task, once per failure. Snapshots, bisects and the release never overlap.
 */
export async function startGreenLoop(options: GreenLoopOptions): Promise<GreenLoop> {
  const { repo, settings, now } = options;
  const controller = new AbortController();
  const abort = () => controller.abort(options.signal.reason);
  options.signal.addEventListener('abort', abort, { once: true });
  const signal = controller.signal;
  const state: GreenState = restoreGreenState(options.events, options.tasks, options.runId);
  const cache = new Map<string, SnapshotCheck>();
  let landed = await commitCount(repo, state.lastSnapshot?.commit ?? options.base, await resolveBranch(repo, repo.trunk));
  let lastSnapshotAt = state.lastSnapshotAt ?? now();
  let requested = false;
  let stopped = false;
  let lastRelease: { commit: string; verdict: ReleaseVerdict } | null = null;
  let blockedReason: string | null = null;
  let turn: Promise<unknown> = Promise.resolve();

  /** Runs `work` after whatever snapshot or release is going. */
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = turn.then(work, work);
    turn = next.catch(() => undefined);
    return next;
  };

  const check = async (commit: string, command: string, fresh: boolean): Promise<SnapshotCheck | null> => {
    const key = `${command}\n${commit}`;
    const cached = cache.get(key);
    if (cached !== undefined && !fresh) return cached;
    const result = await checkCommit({
      repo,
      viewsDir: options.viewsDir,
      commit,
      command,
      commands: options.commands,
      timeoutMs: settings.checkTimeoutMs,
      signal,
      dependencyLayer: options.dependencyLayer,
    });
    if (!result.ok) {
      if (!signal.aborted) options.record({ type: 'green.blocked', data: { branch: settings.branch, commit, reason: `the check could not run: ${result.error}` } });
      return null;
    }
    const checked = withFailureLine(result.check, settings.checkTimeoutMs);
    cache.delete(key);
    cache.set(key, checked);
    if (cache.size > CACHED_CHECKS) cache.delete(cache.keys().next().value ?? key);
    return checked;
  };

  const advance = async (commit: string): Promise<void> => {
    const moved = await advanceGreenBranch(repo, { branch: settings.branch, to: commit });
    if (!moved.ok) {
      if (moved.reason !== blockedReason) options.record({ type: 'green.blocked', data: { branch: settings.branch, commit, reason: moved.reason } });
      blockedReason = moved.reason;
      return;
    }
    blockedReason = null;
    if (!moved.moved) return;
    let tag: string | null = null;
    if (settings.tag) {
      const tagged = await tagGreen(repo, { prefix: settings.branch, commit });
      if (tagged.ok) tag = tagged.tag;
      else options.record({ type: 'green.blocked', data: { branch: settings.branch, commit, reason: `it moved, but the tag was not made: ${tagged.reason}` } });
    }
    options.record({ type: 'green.advanced', data: { branch: settings.branch, from: moved.from, to: commit, tag } });
  };

  /** Bisects the snapshot's new failures and tells their owners; returns every failure still open. */
  const traceRed = async (snapshot: SnapshotCheck, releasing: boolean): Promise<OpenFailure[]> => {
    // A failure whose lines the snapshot no longer shows was fixed.
    state.open = state.open.filter((failure) => failure.lines.some((line) => snapshot.failures.includes(line)));
    const known = new Set(state.open.flatMap((failure) => failure.lines));
    const newLines = snapshot.failures.filter((line) => !known.has(line));
    if (newLines.length === 0) return state.open;
    let origins: FailureOrigin[];
    try {
      origins = await traceNewFailures({
        repo,
        snapshot,
        newLines,
        good: state.good,
        base: options.base,
        check: async (commit) => {
          const probed = await check(commit, snapshot.command, false);
          if (probed === null) throw new Error(`colony could not check out ${commit.slice(0, 12)} to bisect`);
          return probed;
        },
        parallel: options.parallel,
        now,
      });
    } catch (error) {
      // The run is ending, or git could not make a view: the failures stay new, and the next red snapshot traces them.
      if (signal.aborted) return state.open;
      throw error;
    }
    await tellOrigins(options, state, snapshot, origins, releasing);
    options.flush();
    return state.open;
  };

  /** One snapshot of main; null when there was nothing to check (no command known, or the view could not be made). */
  const snapshot = async (trigger: Trigger): Promise<GreenSnapshot | null> => {
    const commit = await resolveBranch(repo, repo.trunk);
    const since = state.lastSnapshot?.commit ?? options.base;
    landed = 0;
    lastSnapshotAt = now();
    const command = await checkCommandAt(repo, commit, options.goal(), settings.check);
    if (command === null) return null;
    const checked = await check(commit, command, true);
    if (checked === null) return null;
    options.record({
      type: 'green.checked',
      data: { ...checked, durationMs: Math.round(checked.durationMs), failures: [...checked.failures], trigger, landed: await commitCount(repo, since, commit) },
    });
    state.lastSnapshot = { commit, passed: checked.passed };
    if (checked.passed) {
      state.good = commit;
      state.open = [];
      await advance(commit);
      options.flush();
      return { check: checked, open: [] };
    }
    options.flush();
    return { check: checked, open: [...(await traceRed(checked, trigger === 'release'))] };
  };

  const due = (): Trigger | null => {
    if (requested) return 'request';
    if (settings.everyCommits !== null && landed >= settings.everyCommits) return 'landings';
    if (settings.everyMs !== null && landed > 0 && now() - lastSnapshotAt >= settings.everyMs) return 'interval';
    return null;
  };

  const running = (async () => {
    while (!stopped && !signal.aborted) {
      const trigger = due();
      if (trigger === null) {
        await options.wakeups.wait(GREEN_WAKEUP, signal, POLL_MS);
        continue;
      }
      requested = false;
      try {
        await exclusive(() => snapshot(trigger));
      } catch (error) {
        if (signal.aborted) break;
        // A git failure in a bisect: said, and the next snapshot tries again.
        const reason = `a red snapshot could not be traced: ${error instanceof Error ? error.message : String(error)}`;
        options.record({ type: 'green.blocked', data: { branch: settings.branch, commit: state.lastSnapshot?.commit ?? options.base, reason } });
      }
    }
  })();

  return {
    observe(event) {
      if (event.type !== 'merge.landed') return;
      landed += 1;
      if (settings.everyCommits !== null && landed >= settings.everyCommits) options.wakeups.wake(GREEN_WAKEUP);
    },
    request() {
      requested = true;
      options.wakeups.wake(GREEN_WAKEUP);
    },
    checkNow: () => exclusive(() => snapshot('request')),
    release: () =>
      exclusive(async () => {
        const commit = await resolveBranch(repo, repo.trunk);
        if (lastRelease !== null && lastRelease.commit === commit) return lastRelease.verdict;
        const taken = await snapshot('release');
        const verdict: ReleaseVerdict =
          taken === null
            ? { passed: true, check: null, refusal: null }
            : {
                passed: taken.check.passed,
                check: taken.check,
                refusal: taken.check.passed ? null : releaseRefusal(options.prompts, taken.check, state.good, taken.open.map((failure) => failure.report)),
              };
        lastRelease = { commit, verdict };
        return verdict;
      }),
    async stop() {
      stopped = true;
      controller.abort(new Error('the run ended'));
      options.signal.removeEventListener('abort', abort);
      await running.catch(() => undefined);
      await turn;
    },
  };
}

/** A check that failed without a failure line still has one, so it can be told from others and traced. */
function withFailureLine(check: SnapshotCheck, timeoutMs: number): SnapshotCheck {
  // Where a timeout cut the output differs from run to run; the timeout itself is the failure.
  if (check.timedOut) return { ...check, failures: [`the check timed out after ${Math.round(timeoutMs / 1000)} s`] };
  if (check.passed || check.failures.length > 0) return check;
  return { ...check, failures: [`the check exited with ${check.exitCode ?? 'a signal'} and printed no failure line`] };
}

async function commitCount(repo: Repository, from: string, to: string): Promise<number> {
  const counted = await runGit(repo.root, ['rev-list', '--count', '--first-parent', `${from}..${to}`]);
  return counted.code === 0 ? Number(counted.stdout.trim()) || 0 : 0;
}
