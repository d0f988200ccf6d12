import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readBriefFile } from './brief-file.js';

describe('readBriefFile', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function briefAt(text: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'colony-brief-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'GOAL.md'), text);
    return join(dir, 'GOAL.md');
  }

  it('reads a real goal whose colony-spec names only the test command', () => {
    const text = '# Faster start\n\nMake `tool --help` answer in 100 ms.\n\n```colony-spec\n{ "project": { "test": "npm test" } }\n```\n';
    expect(readBriefFile(briefAt(text), 'goal')).toEqual({ ok: true, title: 'Faster start', body: text });
  });

  it('refuses a colony-spec that is not valid, saying which field is wrong', () => {
    const read = readBriefFile(briefAt('# Goal\n\n```colony-spec\n{ "project": { "index": "src/index.ts" } }\n```\n'), 'goal');
    expect(read.ok).toBe(false);
    expect(read.ok ? '' : read.error).toMatch(/GOAL\.md has a colony-spec block that is not valid: .*- project\.index: must be a relative path ending in \.js/s);
  });

  it('refuses a file that is not text: an executable, and Latin-1 bytes that are not UTF-8', () => {
    const dir = mkdtempSync(join(tmpdir(), 'colony-brief-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'goal.bin'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00]));
    writeFileSync(join(dir, 'latin1.md'), Buffer.from('# Caf\xe9 goal\n', 'latin1'));
    for (const name of ['goal.bin', 'latin1.md']) {
      expect(readBriefFile(join(dir, name), 'goal')).toEqual({
        ok: false,
        error: `the goal file ${join(dir, name)} is not text (it is not UTF-8, or it holds NUL bytes): pass a Markdown file describing the goal`,
      });
    }
    writeFileSync(join(dir, 'utf8.md'), '# Café goal\n');
    expect(readBriefFile(join(dir, 'utf8.md'), 'goal')).toMatchObject({ ok: true, title: 'Café goal' });
  });
});
