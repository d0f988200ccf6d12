import { fail, pass, type DoctorCheck } from './types.js';

/** The oldest Node colony runs on: package.json's `engines` (a test holds the two together). */
export const NODE_REQUIRED = '20.19';

/**
 * The oldest git colony runs on, and why: it lists worktrees with `git worktree list
 * --porcelain -z` (2.36), and before that it needs `git switch` (2.23), `update-ref --stdin`
 * transactions (2.27) and `init --initial-branch` (2.28). Merges replay in process, so nothing
 * newer (`merge-tree --write-tree`, 2.38) is needed.
 */
export const GIT_REQUIRED = '2.36';
const GIT_REASON = 'git worktree list -z';

/** What `git --version` printed, or why it could not run. */
export type GitVersionOutput = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly error: string };

const GIT_FIX = `install git ${GIT_REQUIRED} or later: \`apt-get install git\` on Debian and Ubuntu (bookworm and 22.04 have it), \`dnf install git\` on Fedora`;

export function checkNode(version: string): DoctorCheck {
  const found = parseVersion(version);
  if (found !== null && atLeast(found, NODE_REQUIRED)) return pass('node', `Node ${version} (colony needs ${NODE_REQUIRED} or later)`);
  return fail(
    'node',
    `Node ${version} is older than the ${NODE_REQUIRED} colony needs`,
    `install Node ${NODE_REQUIRED} or later (22 or 24 will do): from nodejs.org, or \`nvm install 22\` with nvm`,
  );
}

export function checkGit(output: GitVersionOutput): DoctorCheck {
  if (!output.ok) return fail('git', `git cannot be run: ${output.error}`, GIT_FIX);
  // `git version 2.39.5`, `git version 2.39.5.windows.1`, `git version 2.39.3 (Apple Git-146)`.
  const version = /git version (\d+\.\d+(?:\.\d+)?)/.exec(output.text)?.[1] ?? null;
  if (version === null) return fail('git', `\`git --version\` printed "${output.text.trim()}", which names no version`, GIT_FIX);
  const found = parseVersion(version);
  if (found !== null && atLeast(found, GIT_REQUIRED)) return pass('git', `git ${version} (colony needs ${GIT_REQUIRED} or later, for ${GIT_REASON})`);
  return fail('git', `git ${version} is older than the ${GIT_REQUIRED} colony needs (for ${GIT_REASON})`, GIT_FIX);
}

function parseVersion(text: string): number[] | null {
  const match = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(text.trim());
  if (match === null) return null;
  return [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
}

function atLeast(found: readonly number[], required: string): boolean {
  const wanted = parseVersion(required) ?? [];
  for (let index = 0; index < wanted.length; index += 1) {
    const have = found[index] ?? 0;
    const need = wanted[index] ?? 0;
    if (have !== need) return have > need;
  }
  return true;
}
