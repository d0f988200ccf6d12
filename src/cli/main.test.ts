import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from './main.js';

async function colony(argv: readonly string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), env, cwd: '/nonexistent', signal: new AbortController().signal });
  return { code, stdout, stderr };
}

describe('the colony command', () => {
  it("answers --version with the package's own version", async () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect((await colony(['--version'])).stdout.trim()).toBe(manifest.version);
  });

  it('takes --no-color before or after any command, and lists it in the help', async () => {
    expect((await colony(['--help'])).stdout).toMatch(/--no-color +draw the terminal UI without colours/);
    for (const argv of [['status', '--no-color', '--repo', '/nonexistent'], ['--no-color', 'status', '--repo', '/nonexistent']]) {
      const result = await colony(argv);
      expect(result.stderr).not.toContain('unknown option');
      expect(result.stderr).toContain('there is no run');
    }
  });
});
