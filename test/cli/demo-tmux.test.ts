import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { openColonyInTmux, type TmuxTerminal } from '../testing/tmux-terminal.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';

let terminal: TmuxTerminal | null = null;
let dir: string | null = null;

/** A directory the demo's sandboxed agents, other users, can get through to its repository. */
function demoDirectory(): string {
  const made = mkdtempSync(join(tmpdir(), 'colony-demo-tmux-'));
  chmodSync(made, 0o755);
  return made;
}

afterEach(() => {
  terminal?.close();
  terminal = null;
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

describeRuns('colony demo, in a real terminal', () => {
  it('draws the terminal UI over the run, then takes it down and prints the summary', async () => {
    dir = demoDirectory();
    terminal = openColonyInTmux(['demo', '--dir', join(dir, 'demo')], dir, { columns: 120, rows: 40 });
    // The UI's header and agent tree, while the run goes.
    await terminal.waitFor(/colony run-\w+ running/, 60_000);
    await terminal.waitFor(/▾ root planner-\w+ toolbox/);
    // The summary's last lines, once the UI is down.
    const summary = await terminal.waitFor('Look around:', 180_000);
    expect(summary).toMatch(/commits landed: 12\b/);
  }, 240_000);

  it('prints progress lines with --no-tui, as it does with no terminal', async () => {
    dir = demoDirectory();
    terminal = openColonyInTmux(['demo', '--dir', join(dir, 'demo'), '--no-tui'], dir, { columns: 120, rows: 40 });
    await terminal.waitFor('Look around:', 180_000);
    // The progress lines scroll by above the summary: read them all, not only the last screen.
    const printed = terminal.printed();
    expect(printed).toMatch(/merged [0-9a-f]{12} \(/);
    expect(printed).not.toMatch(/colony run-\w+ (running|done)/);
  }, 240_000);
});
