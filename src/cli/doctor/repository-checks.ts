import { agentBlockedAt, agentPathsOf, blockedPathProblem, unreachableFor } from '../../orchestrator/setup/command-sandbox.js';
import type { SandboxMethod } from '../../sandbox/types.js';
import type { OpenRepositoryResult, Repository } from '../../workspace/git/repository.js';
import { problemAndFix } from './problem-and-fix.js';
import { fail, pass, type DoctorCheck } from './types.js';

/**
 * The repository colony would work on (`--repo`): a checkout with a branch and a commit, as
 * `openRepository` demands. Its errors say what is wrong and then what to do; the first
 * sentence is the line, the rest its fix.
 */
export function checkRepository(dir: string, opened: OpenRepositoryResult): DoctorCheck {
  if (opened.ok) return pass('repository', `${opened.repo.root}, on ${opened.repo.mainBranch}`);
  const { problem, fix } = problemAndFix(opened.error, `make ${dir} a git checkout with a commit, or pass another with --repo`);
  return fail('repository', problem, fix);
}

/** What decides whether agents get to the repository: who colony runs as, and whether root can make a mount namespace here. */
export interface RepositoryPathProbes {
  readonly isRoot: boolean;
  /** Why root cannot cover a private directory for bubblewrap here, or null when it can (`probeMountNamespace`). */
  readonly mountNamespaceProblem: () => string | null;
}

/**
 * Whether agents' commands get to the repository and the state directory. They run as other
 * uids only when colony is root with a real sandbox. Then a directory on the way that they may
 * not enter (a home at 0700, a `mktemp -d`) is covered by the sandbox, which shows them only
 * what they need in it, wherever root can make a mount namespace (always for `unshare`, which
 * runs in one); only the git directory itself must let them in. Where root cannot, every
 * directory on the way must let them through (`o+x`), as the run checks. A run's group is its
 * own and unknown before it starts, so only `o+x` counts here, as it does for a new run.
 */
export function checkRepositoryPath(repo: Repository, stateDir: string, method: SandboxMethod, probes: RepositoryPathProbes): DoctorCheck {
  if (!probes.isRoot || method === 'none') {
    const who = method === 'none' ? 'commands run unconfined' : 'colony is not root';
    return pass('repository path', `${who}, so agents' commands run as your own uid and reach what you reach`);
  }
  const coverProblem = method === 'unshare' ? null : probes.mountNamespaceProblem();
  const covers = coverProblem === null;
  const blocked = agentBlockedAt(null, stateDir, repo.gitDir, covers);
  if (blocked !== null) {
    const problem = blockedPathProblem(blocked, covers);
    return fail('repository path', covers ? problem.error : `${problem.error} (${coverProblem})`, problem.fix);
  }
  const hidden = covers ? unreachableFor(null, agentPathsOf(stateDir, repo.gitDir)) : null;
  if (hidden !== null) {
    return pass(
      'repository path',
      `agents run as other uids, who may not enter ${hidden}; each command gets it covered in a mount namespace of its own, showing only its workspace and the git directory at their paths and nothing else in it, so nothing needs changing`,
    );
  }
  return pass('repository path', `agents running as other uids can get through every directory to ${repo.gitDir} and to ${stateDir}`);
}
