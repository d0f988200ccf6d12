import type { SpecModule } from '../../spec/colony-spec.js';

/**
 * How the sim planner splits its modules: below the longest common folder of all of them
 * (the base), each first-level folder is an area. An area with more than
 * `DELEGATE_ABOVE` modules is delegated to a sub-planner; every other module gets a task.
 */

export const DELEGATE_ABOVE = 8;

/** The longest folder prefix every path shares, with a trailing slash; '' when none. */
export function baseFolderOf(paths: readonly string[]): string {
  const folders = paths.map((path) => path.split('/').slice(0, -1));
  const first = folders[0] ?? [];
  let length = 0;
  while (length < first.length && folders.every((parts) => parts[length] === first[length])) length += 1;
  return first.slice(0, length).map((part) => `${part}/`).join('');
}

/** The first folder below the base that holds the path (`src/collections/`), or null when it sits in the base itself. */
export function areaOf(path: string, base: string): string | null {
  const rest = path.slice(base.length);
  const slash = rest.indexOf('/');
  return slash === -1 ? null : `${base}${rest.slice(0, slash + 1)}`;
}

export interface SplitModules {
  /** Areas with more than DELEGATE_ABOVE modules, each for one sub-planner, in order of first appearance. */
  readonly delegated: readonly { readonly area: string; readonly modules: readonly SpecModule[] }[];
  /** Every other module, one task each, in the given order. */
  readonly tasks: readonly SpecModule[];
}

/** Splits `modules` by their areas below `base` (the base of all the planner's modules, so areas stay put across replans). */
export function splitModules(modules: readonly SpecModule[], base: string): SplitModules {
  const areas = new Map<string, SpecModule[]>();
  for (const module of modules) {
    const area = areaOf(module.path, base);
    if (area === null) continue;
    areas.set(area, [...(areas.get(area) ?? []), module]);
  }
  const delegated = [...areas]
    .filter(([, members]) => members.length > DELEGATE_ABOVE)
    .map(([area, members]) => ({ area, modules: members }));
  const delegatedAreas = new Set(delegated.map((group) => group.area));
  const tasks = modules.filter((module) => !delegatedAreas.has(areaOf(module.path, base) ?? ''));
  return { delegated, tasks };
}

/** The plan in words, for the scratchpad: the base, each area with its count and how it is handled. */
export function describePlan(modules: readonly SpecModule[], base: string, owner: string): string[] {
  const where = base === '' ? 'the repository root' : base;
  const counts = new Map<string | null, number>();
  for (const module of modules) {
    const area = areaOf(module.path, base);
    counts.set(area, (counts.get(area) ?? 0) + 1);
  }
  const lines = [`Plan for ${owner}: ${modules.length} module${plural(modules.length)} under ${where}.`];
  for (const [area, count] of counts) {
    const handling = area === null ? 'one task each' : count > DELEGATE_ABOVE ? 'delegated to a sub-planner' : 'one task each';
    lines.push(`- ${area ?? `directly in ${where}`}: ${count} module${plural(count)}, ${handling}`);
  }
  return lines;
}

export function plural(count: number): string {
  return count === 1 ? '' : 's';
}
