import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALLOWED_IMPORTS, layerViolations, sourceFiles, violationsIn } from './layers.js';

const sourceRoot = resolve(import.meta.dirname, '../../src');

describe('layers', () => {
  it('no source file imports against the arrows', () => {
    expect(layerViolations(sourceRoot)).toEqual([]);
  });

  it('flags an upward import, a sideways one and a dynamic one', () => {
    const file = join(sourceRoot, 'model', 'example.ts');
    const text = [
      "import { x } from '../store/event-store.js';",
      "import type { Tool } from '../tools/tool.js';",
      "const cli = await import('../cli/main.js');",
      "import { ok } from './messages.js';",
      "import { z } from 'zod';",
    ].join('\n');
    expect(violationsIn(sourceRoot, file, text).map((v) => v.to)).toEqual(['store', 'tools', 'cli']);
  });

  it('knows every layer folder under src', () => {
    const folders = readdirSync(sourceRoot, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.filter((folder) => !(folder in ALLOWED_IMPORTS))).toEqual([]);
  });

  it('keeps every source file under 800 lines', () => {
    const long = sourceFiles(sourceRoot)
      .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter((entry) => entry.lines > 800);
    expect(long).toEqual([]);
  });
});
