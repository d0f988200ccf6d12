import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * Which layers each layer may import. Arrows point one way, down toward `events`, the
 * vocabulary most layers share, and `errors`, which every layer may use. See docs/architecture.md.
 */
export const ALLOWED_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  errors: [],
  events: ['errors'],
  spec: ['errors'],
  protocol: [],
  model: ['errors'],
  sim: ['model', 'spec', 'protocol', 'errors'],
  sandbox: ['errors'],
  workspace: ['events', 'errors'],
  store: ['events', 'errors'],
  tools: ['protocol', 'sandbox', 'workspace', 'events', 'errors'],
  agent: ['model', 'tools', 'protocol', 'events', 'errors'],
  orchestrator: ['spec', 'protocol', 'agent', 'model', 'tools', 'workspace', 'sandbox', 'store', 'events', 'errors'],
  observe: ['protocol', 'store', 'events', 'errors'],
  ui: ['observe', 'events', 'errors'],
  bench: ['workspace', 'events', 'errors'],
  cli: ['bench', 'ui', 'sim', 'protocol', 'observe', 'orchestrator', 'agent', 'model', 'tools', 'workspace', 'sandbox', 'store', 'events', 'errors'],
};

/**
 * The rooms (subfolders) of each layer and which of their siblings each may import. A layer's
 * top folder is its front door (contracts and entry points): every room of the layer may
 * import it, and it may import any room; the check for cycles keeps that one way file by file.
 * A `testing/` folder is test support: it may import anything in its layer, and no production
 * file anywhere imports it.
 */
export const ROOM_IMPORTS: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  events: { bodies: [], testing: [] },
  model: { providers: ['resilience'], resilience: [], server: [], testing: [] },
  sim: {
    planner: ['reading', 'scenario', 'worker'],
    worker: ['reading', 'scenario'],
    reading: [],
    scenario: [],
    testing: [],
  },
  sandbox: {
    process: [],
    cgroups: [],
    confinement: ['process', 'cgroups'],
    network: [],
    testing: [],
  },
  workspace: {
    files: [],
    git: ['files'],
    merge: ['git', 'files'],
    providers: ['providers/worktree', 'providers/overlay', 'git', 'files'],
    'providers/worktree': ['git', 'files'],
    'providers/overlay': ['git', 'files'],
    dependencies: ['git', 'files'],
    green: ['git'],
    checkout: ['git', 'files'],
    testing: [],
  },
  store: { events: [], tasks: [], sqlite: ['events', 'tasks'], postgres: ['events', 'tasks'], testing: [] },
  tools: { testing: [] },
  agent: { testing: [] },
  orchestrator: {
    session: ['runner', 'roles/planner', 'roles/worker', 'context', 'green', 'steering', 'budget', 'in-flight', 'resume', 'setup', 'prompts'],
    runner: ['roles/planner', 'roles/worker', 'context', 'steering', 'budget', 'resume', 'setup', 'prompts'],
    'roles/planner': ['context', 'green', 'budget', 'in-flight', 'resume', 'setup', 'prompts'],
    'roles/worker': ['context', 'green', 'budget', 'in-flight', 'resume', 'setup', 'prompts'],
    context: ['green', 'steering', 'budget', 'in-flight', 'resume', 'setup', 'prompts'],
    green: ['setup', 'prompts'],
    steering: [],
    budget: ['prompts'],
    'in-flight': [],
    resume: ['setup'],
    setup: [],
    prompts: [],
  },
  observe: { status: [], analysis: [], view: ['status'], replay: ['view'], testing: [] },
  ui: { tui: [] },
  bench: { merge: [], workspaces: [] },
  cli: { commands: ['config', 'doctor'], config: [], doctor: [], clean: [], land: [], host: ['commands', 'config'] },
};

/**
 * Rooms whose files may import only these other layers, a narrower set than their layer's:
 * steering is used from processes that do not run the run (`colony say`, `andon`, the TUI), so
 * it needs only the store and the events (and the errors every layer shares).
 */
export const ROOM_LAYER_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  'orchestrator/steering': ['store', 'events', 'errors'],
};

export interface LayerViolation {
  readonly file: string;
  readonly specifier: string;
  readonly from: string;
  readonly to: string;
}

const IMPORT_PATTERN = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;

/** Where a file sits: its layer and its room in that layer ('' for the layer's top folder). */
export interface Place {
  readonly layer: string;
  readonly room: string;
}

export function placeOf(sourceRoot: string, file: string): Place | undefined {
  const parts = relative(sourceRoot, file).split(sep);
  if (parts.length < 2 || parts[0] === '..') return undefined;
  return { layer: parts[0] ?? '', room: parts.slice(1, -1).join('/') };
}

function isTesting(room: string): boolean {
  return room === 'testing' || room.endsWith('/testing') || room.startsWith('testing/');
}

/**
 * The relative imports of a file's text, each resolved to the file it names. An import of a
 * file that does not exist is text the file writes (a module the sim renders), not an import.
 */
export function importsOf(file: string, text: string, exists: (path: string) => boolean = existsSync): { readonly specifier: string; readonly target: string }[] {
  const found: { specifier: string; target: string }[] = [];
  for (const match of text.matchAll(IMPORT_PATTERN)) {
    const specifier = match[1] ?? '';
    if (!specifier.startsWith('.')) continue;
    const named = resolve(dirname(file), specifier);
    const target = [named.replace(/\.js$/, '.ts'), named.replace(/\.js$/, '.tsx'), named].find(exists);
    if (target !== undefined) found.push({ specifier, target });
  }
  return found;
}

/**
 * Every import in `file` that points against the arrows: between layers, between rooms, or into
 * test support. `exists` tells an import from text that only looks like one; by default every
 * specifier counts.
 */
export function violationsIn(sourceRoot: string, file: string, text: string, exists: (path: string) => boolean = () => true): LayerViolation[] {
  const from = placeOf(sourceRoot, file);
  if (from === undefined) return [];
  const allowed = ALLOWED_IMPORTS[from.layer];
  const found: LayerViolation[] = [];
  for (const { specifier, target } of importsOf(file, text, exists)) {
    const to = placeOf(sourceRoot, target);
    if (to === undefined) continue;
    const fromName = from.room === '' ? from.layer : `${from.layer}/${from.room}`;
    const toName = to.room === '' ? to.layer : `${to.layer}/${to.room}`;
    if (isTesting(to.room) && !isTesting(from.room)) {
      found.push({ file, specifier, from: fromName, to: toName });
    } else if (to.layer !== from.layer) {
      const narrower = ROOM_LAYER_IMPORTS[fromName];
      if (allowed === undefined || !allowed.includes(to.layer) || (narrower !== undefined && !narrower.includes(to.layer))) {
        found.push({ file, specifier, from: fromName, to: toName });
      }
    } else if (from.room !== to.room && from.room !== '' && to.room !== '' && !isTesting(from.room)) {
      const rooms = ROOM_IMPORTS[from.layer]?.[from.room];
      if (rooms === undefined || !rooms.includes(to.room)) found.push({ file, specifier, from: fromName, to: toName });
    }
  }
  return found;
}

/** Every file under `dir` whose path `keep` accepts. */
function filesUnder(dir: string, keep: (path: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path, keep);
    return keep(path) ? [path] : [];
  });
}

/** The production sources under `dir`: TypeScript files that are not tests. */
export function sourceFiles(dir: string): string[] {
  return filesUnder(dir, (path) => /\.tsx?$/.test(path) && !/\.test\.tsx?$/.test(path));
}

export function layerViolations(sourceRoot: string): LayerViolation[] {
  return sourceFiles(sourceRoot).flatMap((file) => violationsIn(sourceRoot, file, readFileSync(file, 'utf8'), existsSync));
}

/** The rooms on disk: every folder under a layer that holds TypeScript, as `layer/room`. */
export function roomsOnDisk(sourceRoot: string): string[] {
  const rooms = new Set<string>();
  for (const file of filesUnder(sourceRoot, (path) => /\.tsx?$/.test(path))) {
    const place = placeOf(sourceRoot, file);
    if (place !== undefined && place.room !== '') rooms.add(`${place.layer}/${place.room}`);
  }
  return [...rooms].sort();
}

/**
 * The import cycles among `files`, type imports counted: each a strongly connected group of
 * two or more files (Tarjan's algorithm), listed by path.
 */
export function importCycles(files: readonly string[], textOf: (file: string) => string): string[][] {
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(file, textOf(file), (path) => known.has(path)).map(({ target }) => target);
    edges.set(file, [...new Set(targets)]);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of edges.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    for (;;) {
      const member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      group.push(member);
      if (member === file) break;
    }
    if (group.length > 1) cycles.push(group.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return cycles;
}
