import type { EventBody } from '../../events/event-types.js';
import type { EventStore } from '../../store/events/event-store.js';
import type { TaskStore } from '../../store/tasks/task-store.js';
import { runGit } from '../../workspace/git/git.js';
import { advanceGreenBranch, tagGreen } from '../../workspace/green/green-branch.js';
import type { Repository } from '../../workspace/git/repository.js';
import { resolveBranch } from '../../workspace/workspace.js';
import type { CommandRunners } from '../setup/command-sandbox.js';
import { checkCommandAt } from './green-check-command.js';
import { groupByFloor, traceNewFailures } from './green-failures.js';
import { type FailureOrigin, type GreenState, type OpenFailure } from './types.js';
import { releaseRefusal, tellOrigins, uncheckedRefusal } from './green-report.js';
import { checkCommit, type SnapshotCheck } from './green-snapshot.js';
import { closeFixedFailures, markPassed, restoreGreenState } from './green-state.js';
import type { PromptSet } from '../prompts/prompt-set.js';
import type { Wakeups } from '../wakeups.js';
import type { GreenLoop, ReleaseVerdict, SnapshotOutcome } from './types.js';
import { errorMessage } from '../../errors/error-message.js';
import type { GreenSettings } from '../../events/run-settings.js';
import type { DependencyLayers } from '../setup/dependency-layers.js';


/** The wake-up key of the green loop: a landing that reaches the count, or a request. */
export const GREEN_WAKEUP = 'green-loop';
/** The loop looks at the clock at least this often, for the interval and for another process's request. */
const POLL_MS = 1_000;
/** Why a snapshot asked for took none: nothing says how to check the project. */
export const NO_CHECK_KNOWN =
  'no check command is known: the run has no --check, its goal no colony-spec test command, and the project no test script or test target';
/** How a `green.blocked` opens when the check itself could not run. */
export const CHECK_COULD_NOT_RUN = 'the check could not run: ';
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
  /** The shared installs of the project's dependencies: each view checked gets its commit's. */
  readonly dependencyLayers: DependencyLayers;
  readonly prompts: PromptSet;
  readonly settings: GreenSettings;
  /** The run's system recorder. */
  readonly record: (body: EventBody) => void;
  readonly flush: () => Promise<void>;
  /** The goal as it stands now (its colony-spec may name the check). */
  readonly goal: () => Promise<string>;
  /** Main's commit when the run started. */
  readonly base: string;
  /** Commits a bisect checks at once. */
  readonly parallel: number;
  readonly wakeups: Wakeups;
  readonly now: () => number;
  readonly signal: AbortSignal;
}

type Trigger = 'landings' | 'interval' | 'release' | 'request';

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
  const state: GreenState = await restoreGreenState(options.events, options.tasks, options.runId);
  const cache = new Map<string, SnapshotCheck>();
  let landed = 0;
  let lastSnapshotAt = state.lastSnapshotAt ?? now();
  let requested = false;
  let stopped = false;
  let lastPassingRelease: { commit: string; verdict: ReleaseVerdict } | null = null;
  let blockedReason: string | null = null;
  let turn: Promise<unknown> = Promise.resolve();

  /** Runs `work` after whatever snapshot or release is going. */
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = turn.then(work, work);
    turn = next.catch(() => undefined);
    return next;
  };

  /** Says once (until the reason changes) what kept the loop from part of its work. */
  const blocked = (commit: string, reason: string): void => {
    if (reason !== blockedReason) options.record({ type: 'green.blocked', data: { branch: settings.branch, commit, reason } });
    blockedReason = reason;
  };

  /** The check on one commit; a probe's result is reused, a timeout's never (it may pass next time). */
  const check = async (commit: string, command: string, fresh: boolean): Promise<{ ok: true; check: SnapshotCheck } | { ok: false; error: string }> => {
    const key = `${command}\n${commit}`;
    const cached = cache.get(key);
    if (cached !== undefined && !fresh) return { ok: true, check: cached };
    const result = await checkCommit({
      repo,
      viewsDir: options.viewsDir,
      commit,
      command,
      commands: options.commands,
      timeoutMs: settings.checkTimeoutMs,
      signal,
      dependencyLayers: options.dependencyLayers,
    });
    if (!result.ok) return result;
    const checked = result.check;
    cache.delete(key);
    if (!checked.timedOut) cache.set(key, checked);
    if (cache.size > CACHED_CHECKS) cache.delete(cache.keys().next().value ?? key);
    return { ok: true, check: checked };
  };

  const advance = async (commit: string): Promise<void> => {
    const moved = await advanceGreenBranch(repo, { branch: settings.branch, to: commit });
    if (!moved.ok) {
      blocked(commit, moved.error);
      return;
    }
    blockedReason = null;
    if (!moved.moved) return;
    let tag: string | null = null;
    if (settings.tag) {
      const tagged = await tagGreen(repo, { prefix: settings.branch, commit });
      if (tagged.ok) tag = tagged.tag;
      else blocked(commit, `it moved, but the tag was not made: ${tagged.error}`);
    }
    options.record({ type: 'green.advanced', data: { branch: settings.branch, from: moved.from, to: commit, tag } });
  };

  /** Bisects the snapshot's new failures and tells their owners; returns every failure still open. */
  const traceRed = async (snapshot: SnapshotCheck, releasing: boolean): Promise<OpenFailure[]> => {
    // A failure whose lines the snapshot no longer shows was fixed.
    closeFixedFailures(state, snapshot.failures, snapshot.commit);
    const known = new Set(state.open.flatMap((failure) => failure.lines));
    const newLines = snapshot.failures.filter((line) => !known.has(line));
    if (newLines.length === 0) return state.open;
    const origins: FailureOrigin[] = [];
    let untraced: string | null = null;
    try {
      // Lines fixed since the last pass and back again are searched for above their fix.
      for (const [floor, lines] of groupByFloor(newLines, state)) {
        const found = await traceNewFailures({
          repo,
          snapshot,
          newLines: lines,
          good: floor,
          base: options.base,
          check: async (commit) => {
            const probed = await check(commit, snapshot.command, false);
            if (!probed.ok) throw new Error(probed.error);
            return probed.check;
          },
          parallel: options.parallel,
          now,
        });
        origins.push(...found);
      }
    } catch (error) {
      if (signal.aborted) return state.open;
      untraced = `colony could not bisect it: ${errorMessage(error)}`;
    }
    await tellOrigins(options, state, snapshot, origins, releasing);
    // Lines no commit could be found for (a flaky check, a probe git could not make) stay open
    // as one failure, so they are not bisected again at every red snapshot.
    const traced = new Set(origins.flatMap((origin) => origin.lines));
    const rest = newLines.filter((line) => !traced.has(line));
    if (rest.length > 0) {
      blocked(snapshot.commit, `no commit could be found for ${rest.length} failure line(s) (${rest[0] ?? ''}): ${untraced ?? 'no commit since the last pass shows them, so the check may be flaky'}`);
      state.open.push({ key: `untraced-${snapshot.commit}`, lines: rest, report: null });
    }
    await options.flush();
    return state.open;
  };

  /** One snapshot of main. */
  const snapshot = async (trigger: Trigger): Promise<SnapshotOutcome> => {
    // Reset first: a git failure below must not leave the snapshot due, to be retried at once.
    landed = 0;
    lastSnapshotAt = now();
    const commit = await resolveBranch(repo, repo.mainBranch);
    const since = state.lastSnapshot?.commit ?? options.base;
    const command = (await checkCommandAt(repo, commit, await options.goal(), settings.check)) ?? state.command;
    if (command === null) return { kind: 'no-command', commit };
    const result = await check(commit, command, true);
    if (signal.aborted) return { kind: 'stopped' };
    if (!result.ok) {
      blocked(commit, `${CHECK_COULD_NOT_RUN}${result.error}`);
      return { kind: 'could-not-check', commit, command, reason: result.error };
    }
    const checked = result.check;
    state.command = command;
    options.record({
      type: 'green.checked',
      data: { ...checked, durationMs: Math.round(checked.durationMs), failures: [...checked.failures], trigger, landed: await commitCount(repo, since, commit) },
    });
    state.lastSnapshot = { commit, passed: checked.passed };
    if (checked.passed) {
      markPassed(state, commit);
      await advance(commit);
      await options.flush();
      return { kind: 'checked', snapshot: { check: checked, open: [] } };
    }
    await options.flush();
    const open = await traceRed(checked, trigger === 'release');
    return signal.aborted ? { kind: 'stopped' } : { kind: 'checked', snapshot: { check: checked, open: [...open] } };
  };

  const release = async (): Promise<ReleaseVerdict> => {
    const commit = await resolveBranch(repo, repo.mainBranch);
    // Only a pass is kept: a failing release is checked again, a flaky or timed-out one may pass.
    if (lastPassingRelease !== null && lastPassingRelease.commit === commit) return lastPassingRelease.verdict;
    const outcome = await snapshot('release');
    switch (outcome.kind) {
      case 'stopped':
        return { passed: false, stopped: true, check: null, refusal: null };
      case 'no-command':
        return { passed: true, stopped: false, check: null, refusal: null };
      case 'could-not-check':
        return { passed: false, stopped: false, check: null, refusal: uncheckedRefusal(options.prompts, outcome.command, outcome.reason) };
      case 'checked': {
        const { check: checked, open } = outcome.snapshot;
        if (!checked.passed) return { passed: false, stopped: false, check: checked, refusal: releaseRefusal(options.prompts, checked, state.good, open) };
        const verdict = { passed: true, stopped: false, check: checked, refusal: null };
        lastPassingRelease = { commit, verdict };
        return verdict;
      }
    }
  };

  const due = (): Trigger | null => {
    if (requested) return 'request';
    if (settings.everyCommits !== null && landed >= settings.everyCommits) return 'landings';
    if (settings.everyMs !== null && landed > 0 && now() - lastSnapshotAt >= settings.everyMs) return 'interval';
    return null;
  };

  const counted = { from: '', to: '', count: 0 };
  const running = (async () => {
    while (!stopped && !signal.aborted) {
      try {
        // Counted on main itself, not from events: commits anyone lands count. Counted again only when main moved.
        const from = state.lastSnapshot?.commit ?? options.base;
        const to = await resolveBranch(repo, repo.mainBranch);
        if (counted.from !== from || counted.to !== to) Object.assign(counted, { from, to, count: await commitCount(repo, from, to) });
        landed = counted.count;
        const trigger = due();
        if (trigger === null) {
          await options.wakeups.wait(GREEN_WAKEUP, signal, POLL_MS);
          continue;
        }
        requested = false;
        const outcome = await exclusive(() => snapshot(trigger));
        // Whoever asked (`colony green --now`) waits for an answer: one that took no snapshot says why.
        if (trigger === 'request' && (outcome.kind === 'no-command' || outcome.kind === 'could-not-check')) {
          const reason = outcome.kind === 'no-command' ? NO_CHECK_KNOWN : `${CHECK_COULD_NOT_RUN}${outcome.reason}`;
          options.record({ type: 'green.blocked', data: { branch: settings.branch, commit: outcome.commit, reason } });
          await options.flush();
        }
      } catch (error) {
        if (signal.aborted) break;
        blocked(state.lastSnapshot?.commit ?? options.base, `the loop could not look at main: ${errorMessage(error)}`);
        await options.wakeups.wait(GREEN_WAKEUP, signal, POLL_MS);
      }
    }
  })();

  return {
    observe(event) {
      if (event.type !== 'merge.landed') return;
      if (settings.everyCommits !== null && landed + 1 >= settings.everyCommits) options.wakeups.wake(GREEN_WAKEUP);
    },
    request() {
      requested = true;
      options.wakeups.wake(GREEN_WAKEUP);
    },
    checkNow: () => exclusive(() => snapshot('request')),
    release: () => exclusive(release),
    async stop() {
      stopped = true;
      controller.abort(new Error('the run ended'));
      options.signal.removeEventListener('abort', abort);
      await running.catch(() => undefined);
      await turn;
    },
  };
}

async function commitCount(repo: Repository, from: string, to: string): Promise<number> {
  const counted = await runGit(repo.root, ['rev-list', '--count', '--first-parent', `${from}..${to}`]);
  return counted.code === 0 ? Number(counted.stdout.trim()) || 0 : 0;
}
