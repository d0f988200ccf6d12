import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ColonyEvent } from '../../src/events/event-types.js';
import type { ExampleRepository } from './example-repository.js';
import { keepModules } from './small-goal.js';

/** The events of one type, typed. */
export function ofType<T extends ColonyEvent['type']>(events: readonly ColonyEvent[], type: T): Extract<ColonyEvent, { type: T }>[] {
  return events.filter((event): event is Extract<ColonyEvent, { type: T }> => event.type === type);
}

/**
 * The toolbox example reduced to one module, depending on `dependencies` from the npm registry
 * with no lockfile and node_modules ignored, committed; its check runs `check` before the
 * example's tests.
 */
export function dependOn(repo: ExampleRepository, dependencies: Record<string, string>, check: string): void {
  const manifest = JSON.parse(readFileSync(join(repo.dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(repo.dir, 'package.json'), `${JSON.stringify({ ...manifest, dependencies }, null, 2)}\n`);
  writeFileSync(join(repo.dir, '.gitignore'), 'node_modules/\n');
  repo.git('add', '-A');
  repo.git('commit', '-qm', 'depend on the registry');
  keepModules(repo, ['src/numbers/clamp.js'], `${check} && node scripts/test.js`);
}
