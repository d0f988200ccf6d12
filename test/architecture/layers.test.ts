import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALLOWED_IMPORTS, importCycles, layerViolations, ROOM_IMPORTS, roomsOnDisk, sourceFiles, violationsIn } from './layers.js';

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

describe('rooms', () => {
  it('declares every room on disk, and every declared room is on disk', () => {
    const declared = Object.entries(ROOM_IMPORTS)
      .flatMap(([layer, rooms]) => Object.keys(rooms).map((room) => `${layer}/${room}`))
      .sort();
    expect(roomsOnDisk(sourceRoot)).toEqual(declared);
  });

  it('declares arrows only to rooms of the same layer', () => {
    const dangling = Object.entries(ROOM_IMPORTS).flatMap(([layer, rooms]) =>
      Object.entries(rooms).flatMap(([room, targets]) => targets.filter((target) => !(target in rooms)).map((target) => `${layer}/${room} -> ${target}`)),
    );
    expect(dangling).toEqual([]);
  });

  it('flags a role importing the session that starts it, a sideways room, and production code importing test support', () => {
    const worker = join(sourceRoot, 'orchestrator', 'roles', 'worker', 'example.ts');
    const text = [
      "import { runRunSession } from '../../session/run-session.js';",
      "import { runTasks } from '../../runner/task-runner.js';",
      "import type { RunContext } from '../../context/run-context.js';",
      "import { createTemporaryRepository } from '../../../workspace/testing/temporary-repository.js';",
      "import { Wakeups } from '../../wakeups.js';",
    ].join('\n');
    expect(violationsIn(sourceRoot, worker, text).map((v) => `${v.from} -> ${v.to}`)).toEqual([
      'orchestrator/roles/worker -> orchestrator/session',
      'orchestrator/roles/worker -> orchestrator/runner',
      'orchestrator/roles/worker -> workspace/testing',
    ]);
  });

  it('keeps steering to the store and the events, so another process can use it', () => {
    const steering = join(sourceRoot, 'orchestrator', 'steering', 'example.ts');
    const text = [
      "import type { TaskStore } from '../../store/tasks/task-store.js';",
      "import type { EventBody } from '../../events/event-types.js';",
      "import { runGit } from '../../workspace/git/git.js';",
      "import type { ChatModel } from '../../model/chat-model.js';",
    ].join('\n');
    expect(violationsIn(sourceRoot, steering, text).map((v) => v.to)).toEqual(['workspace/git', 'model']);
  });

  it('lets test support import across its layer, and nothing in production import the sim but the CLI', () => {
    const support = join(sourceRoot, 'workspace', 'testing', 'example.ts');
    expect(violationsIn(sourceRoot, support, "import { mergeToMain } from '../merge/merge-to-main.js';")).toEqual([]);
    const orchestrator = join(sourceRoot, 'orchestrator', 'session', 'example.ts');
    expect(violationsIn(sourceRoot, orchestrator, "import { parseScenario } from '../../sim/scenario/scenario.js';").map((v) => v.to)).toEqual(['sim/scenario']);
    const cli = join(sourceRoot, 'cli', 'example.ts');
    expect(violationsIn(sourceRoot, cli, "import { SIM_MODEL_FACTORY } from '../sim/sim-model-factory.js';")).toEqual([]);
  });

  it('holds at most 20 source files in any folder', () => {
    const counts = new Map<string, number>();
    for (const file of sourceFiles(sourceRoot)) counts.set(dirname(file), (counts.get(dirname(file)) ?? 0) + 1);
    expect([...counts].filter(([, count]) => count > 20).map(([dir, count]) => `${relative(sourceRoot, dir)}: ${count}`)).toEqual([]);
  });

  it('keeps every source file at 500 lines or fewer', () => {
    const long = sourceFiles(sourceRoot)
      .map((file) => ({ file: relative(sourceRoot, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter((entry) => entry.lines > 500);
    expect(long).toEqual([]);
  });
});

describe('import cycles', () => {
  it('has none, type imports counted', () => {
    const files = sourceFiles(sourceRoot);
    expect(importCycles(files, (file) => readFileSync(file, 'utf8')).map((group) => group.map((file) => relative(sourceRoot, file)))).toEqual([]);
  });

  it('finds a cycle through a type import, and none in a chain', () => {
    const texts: Record<string, string> = {
      '/src/a.ts': "import { b } from './b.js';",
      '/src/b.ts': "import type { C } from './c.js';",
      '/src/c.ts': "import type { A } from './a.js';",
      '/src/d.ts': "import { a } from './a.js';",
    };
    expect(importCycles(Object.keys(texts), (file) => texts[file] ?? '')).toEqual([['/src/a.ts', '/src/b.ts', '/src/c.ts']]);
    delete texts['/src/c.ts'];
    texts['/src/c.ts'] = '';
    expect(importCycles(Object.keys(texts), (file) => texts[file] ?? '')).toEqual([]);
  });
});
