/**
 * Opens a run's cgroups, starts `sleep` in a command cgroup, prints the run's directories and
 * the sleep's pid, then quits with process.exit, as a forced quit does: `close()` never runs.
 */
import { spawn } from 'node:child_process';
import { readCgroupSources, resolveCgroupLayout } from '../cgroups/cgroup-layout.js';
import { openRunCgroups } from '../cgroups/cgroups.js';

const layout = resolveCgroupLayout(readCgroupSources());
if (!layout.ok) throw new Error(layout.error);
const opened = openRunCgroups(layout.layout, process.argv[2] ?? 'exit-test');
if (!opened.ok) throw new Error(opened.error);
const made = opened.cgroups.create('agent-1', { memoryBytes: 64 * 1024 ** 2, maxProcesses: 16 });
if (!made.ok) throw new Error(made.error);
const join = 'for f in "$@"; do echo $$ > "$f"; done; exec sleep 100';
const sleeper = spawn('/bin/sh', ['-c', join, 'sh', ...made.cgroup.procsFiles], { stdio: 'ignore', detached: true });
const start = Date.now();
while (made.cgroup.pids().length === 0 && Date.now() - start < 5_000) await new Promise((resolve) => setTimeout(resolve, 5));
process.stdout.write(`${JSON.stringify({ directories: opened.cgroups.directories, pid: sleeper.pid })}\n`, () => process.exit(0));
