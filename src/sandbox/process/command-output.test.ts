import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandOutput } from './command-output.js';
import { SpillDirectory } from './spill-directory.js';

describe('command output with a spill file', () => {
  let directory = '';
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'colony-spill-'));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const spillDirectory = (maxBytes: number, keep?: number) => {
    const opened = SpillDirectory.open({ hostDirectory: join(directory, 'spill'), visibleDirectory: '/tmp/colony-output', owner: null, maxBytes, ...(keep === undefined ? {} : { keep }) });
    if (!opened.ok) throw new Error(opened.error);
    return opened.directory;
  };

  it('writes nothing to disk for output that fits the capture', () => {
    const output = new CommandOutput(100, spillDirectory(1_000).next());
    output.append(Buffer.from('short\n'));
    expect(output.finish()).toEqual({ output: 'short\n', outputBytes: 6, truncated: false, spillPath: null, spillBytes: 0 });
    expect(readdirSync(join(directory, 'spill'))).toEqual([]);
  });

  it('spills all of an output that outgrows the capture, in order, readable by its owner only', () => {
    const output = new CommandOutput(10, spillDirectory(1_000).next());
    for (const piece of ['0123456', '789abcd', 'efghij']) output.append(Buffer.from(piece));
    const collected = output.finish();
    expect(collected).toMatchObject({ outputBytes: 20, truncated: true, spillPath: '/tmp/colony-output/cmd-1.log', spillBytes: 20 });
    expect(readFileSync(join(directory, 'spill', 'cmd-1.log'), 'utf8')).toBe('0123456789abcdefghij');
    expect(statSync(join(directory, 'spill', 'cmd-1.log')).mode & 0o777).toBe(0o400);
  });

  it('stops writing at the spill limit and says how much it kept', () => {
    const output = new CommandOutput(4, spillDirectory(8).next());
    for (const piece of ['abc', 'def', 'ghi', 'jkl']) output.append(Buffer.from(piece));
    expect(output.finish()).toMatchObject({ outputBytes: 12, truncated: true, spillPath: '/tmp/colony-output/cmd-1.log', spillBytes: 8 });
    expect(readFileSync(join(directory, 'spill', 'cmd-1.log'), 'utf8')).toBe('abcdefgh');
  });

  it('still captures the output when the spill file cannot be made', () => {
    const spill = spillDirectory(1_000);
    rmSync(join(directory, 'spill'), { recursive: true });
    const output = new CommandOutput(4, spill.next());
    output.append(Buffer.from('abcdefgh'));
    expect(output.finish()).toMatchObject({ outputBytes: 8, truncated: true, spillPath: null, spillBytes: 0 });
  });

  it('numbers on from the files already there and keeps only the newest', () => {
    const spill = spillDirectory(1_000);
    writeFileSync(join(directory, 'spill', 'cmd-7.log'), 'from an earlier runner');
    const again = spillDirectory(1_000, 2);
    for (let index = 0; index < 3; index += 1) {
      const output = new CommandOutput(2, again.next());
      output.append(Buffer.from(`run ${index}`));
      output.finish();
    }
    expect(readdirSync(join(directory, 'spill')).sort()).toEqual(['cmd-10.log', 'cmd-9.log']);
    expect(spill.next().visiblePath).toBe('/tmp/colony-output/cmd-1.log');
  });
});
