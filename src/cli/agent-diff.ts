import { readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { AgentTranscript } from '../observe/replay/agent-transcript.js';
import { runGit } from '../workspace/git/git.js';
import { openRepository } from '../workspace/git/repository.js';

/** Lines of diff one page shows before saying how many more there are. */
const MAX_DIFF_LINES = 2_000;
const MAX_COMMITS = 10;

/**
 * An agent's changes for its page in the terminal UI: what its workspace holds that is not
 * committed (while it has one), then the commits it landed on main. git runs with the
 * workspace's git directory named, never through the `.git` file the agent could rewrite, and
 * without optional locks, so looking never contends with the agent's own git.
 */
export function agentDiffReader(repoDir: string): (transcript: AgentTranscript) => Promise<string> {
  return async (transcript) => {
    const opened = await openRepository(repoDir);
    if (!opened.ok) return `colony cannot read the repository: ${opened.error}`;
    const { repo } = opened;
    const parts: string[] = [];
    if (transcript.workspace === null) parts.push('(this agent had no workspace of its own)');
    else parts.push(...(await uncommitted(repo.gitDir, transcript.workspace)));
    const landed = transcript.landed.slice(-MAX_COMMITS);
    parts.push('', transcript.landed.length === 0 ? 'Landed nothing on main yet.' : `Landed ${transcript.landed.length} commit(s)${transcript.landed.length > MAX_COMMITS ? `, the last ${MAX_COMMITS} shown` : ''}:`);
    for (const commit of landed) {
      const shown = await runGit(repo.root, ['--no-optional-locks', 'show', '--stat', '--patch', '--format=commit %H%n%s%n', commit]);
      parts.push(shown.code === 0 ? shown.stdout : `commit ${commit}: ${shown.stderr.trim()}`);
    }
    return capped(parts.join('\n'));
  };
}

async function uncommitted(commonGitDir: string, workspace: string): Promise<string[]> {
  const gitDir = join(commonGitDir, 'worktrees', basename(workspace));
  // The workspace must still be the one git recorded; after it was removed the name may be reused.
  const recorded = await readFile(join(gitDir, 'gitdir'), 'utf8').catch(() => null);
  if (recorded === null || resolve(recorded.trim()) !== join(resolve(workspace), '.git')) {
    return [`Workspace ${workspace}: gone (removed when the agent ended).`];
  }
  const place = { path: workspace, gitDir };
  const diff = await runGit(place, ['--no-optional-locks', 'diff', '--stat', '--patch', 'HEAD']);
  const untracked = await runGit(place, ['--no-optional-locks', 'ls-files', '--others', '--exclude-standard']);
  if (diff.code !== 0) return [`Workspace ${workspace}: git diff failed: ${diff.stderr.trim()}`];
  const added = untracked.stdout.trim();
  return [
    `Workspace ${workspace}: ${diff.stdout.trim() === '' && added === '' ? 'no uncommitted changes' : 'uncommitted changes'}`,
    diff.stdout,
    ...(added === '' ? [] : ['New files not yet added:', ...added.split('\n').map((path) => `  ${path}`)]),
  ];
}

function capped(text: string): string {
  const lines = text.split('\n');
  if (lines.length <= MAX_DIFF_LINES) return text;
  return [...lines.slice(0, MAX_DIFF_LINES), `… ${lines.length - MAX_DIFF_LINES} more line(s)`].join('\n');
}
