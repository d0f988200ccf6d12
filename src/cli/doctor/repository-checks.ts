import { agentPathsOf, blockedPathProblem, unreachableFor } from '../../orchestrator/setup/command-sandbox.js';
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

/**
 * Whether agents' commands get to the repository and the state directory. They run as other
 * uids only when colony is root with a real sandbox, and then every directory on the way must
 * let them through (`o+x`): bubblewrap opens what it binds as the agent's uid. A run's group is
 * its own and unknown before it starts, so only `o+x` counts here, as it does for a new run.
 */
export function checkRepositoryPath(repo: Repository, stateDir: string, method: SandboxMethod, isRoot: boolean): DoctorCheck {
  if (!isRoot || method === 'none') {
    const who = method === 'none' ? 'commands run unconfined' : 'colony is not root';
    return pass('repository path', `${who}, so agents' commands run as your own uid and reach what you reach`);
  }
  const blocked = unreachableFor(null, agentPathsOf(stateDir, repo.gitDir));
  if (blocked === null) return pass('repository path', `agents running as other uids can get through every directory to ${repo.gitDir} and to ${stateDir}`);
  const problem = blockedPathProblem(blocked);
  return fail('repository path', problem.error, problem.fix);
}
