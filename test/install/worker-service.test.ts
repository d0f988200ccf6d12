import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const UNIT = new URL('../../docs/deploy/colony-worker.service', import.meta.url);
const COLONY = fileURLToPath(new URL('../../bin/colony.js', import.meta.url));
// CI installs systemd-analyze (COLONY_REQUIRE_SANDBOX_TESTS=1): there the check runs, whatever the machine.
const hasSystemdAnalyze = process.env.COLONY_REQUIRE_SANDBOX_TESTS === '1' || spawnSync('systemd-analyze', ['--version']).status === 0;

/** `systemd-analyze verify` on the documented unit, its colony where this checkout's is; what it said. */
function verify(unitText: string): { status: number | null; said: string } {
  const dir = mkdtempSync(join(tmpdir(), 'colony-unit-'));
  try {
    const path = join(dir, 'colony-worker.service');
    writeFileSync(path, unitText);
    const result = spawnSync('systemd-analyze', ['verify', '--man=no', path], { encoding: 'utf8' });
    return { status: result.status, said: `${result.stdout}${result.stderr}`.trim() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!hasSystemdAnalyze)('the systemd unit docs/deploy.md gives for colony worker', () => {
  const documented = readFileSync(UNIT, 'utf8');

  it('passes systemd-analyze verify without a word, and runs a colony worker that drains on SIGTERM', () => {
    expect(documented).toContain('ExecStart=/usr/local/bin/colony worker ');
    expect(verify(documented.replace('/usr/local/bin/colony', COLONY))).toEqual({ status: 0, said: '' });
    expect(documented).toMatch(/^KillMode=mixed$/m);
    expect(documented).toMatch(/^KillSignal=SIGTERM$/m);
    // The command line it starts is one colony takes.
    const help = execFileSync(process.execPath, [COLONY, 'worker', '--help'], { encoding: 'utf8' });
    const flags = [...(/^ExecStart=\S+ worker (.*)$/m.exec(documented)?.[1] ?? '').matchAll(/--[a-z-]+/g)].map((match) => match[0]);
    expect(flags.length).toBeGreaterThan(3);
    for (const flag of flags) expect(help).toContain(flag);
  });

  it('would be caught by the check if it named a colony that is not there or a setting systemd does not know', () => {
    expect(verify(documented.replace('/usr/local/bin/colony', '/nonexistent/colony')).status).not.toBe(0);
    expect(verify(documented.replace('KillMode=mixed', 'KillMode=gently')).said).toContain('kill mode');
  });
});
