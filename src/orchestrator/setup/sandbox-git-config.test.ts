import { describe, expect, it } from 'vitest';
import { withoutCredentials } from './sandbox-git-config.js';

describe('the git config commands in the sandbox see', () => {
  it('keeps the settings git needs and drops credentials, helpers and includes', () => {
    const config = [
      '[core]',
      '\trepositoryformatversion = 0',
      '\tbare = false',
      '[remote "origin"]',
      '\turl = https://x-access-token:ghs_SECRET123@github.com/acme/app.git',
      '\tfetch = +refs/heads/*:refs/remotes/origin/*',
      '[http "https://github.com/"]',
      '\textraheader = AUTHORIZATION: basic c2VjcmV0',
      '[credential]',
      '\thelper = store --file /root/.git-credentials',
      '[include]',
      '\tpath = /root/secrets.gitconfig',
      '[includeIf "gitdir:/srv/"]',
      '\tpath = /root/work.gitconfig',
      '[extensions]',
      '\tworktreeConfig = true',
      '',
    ].join('\n');
    const shown = withoutCredentials(config);
    expect(shown).toContain('repositoryformatversion = 0');
    expect(shown).toContain('url = https://[redacted]@github.com/acme/app.git');
    expect(shown).toContain('fetch = +refs/heads/*:refs/remotes/origin/*');
    expect(shown).toContain('worktreeConfig = true');
    for (const secret of ['ghs_SECRET123', 'c2VjcmV0', 'git-credentials', 'secrets.gitconfig', 'work.gitconfig']) expect(shown).not.toContain(secret);
  });
});
