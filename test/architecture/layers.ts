import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * Which layers each layer may import. Arrows point one way, down toward `events`, the
 * vocabulary every layer shares. See docs/architecture.md.
 */
export const ALLOWED_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  events: [],
  model: [],
  spec: [],
  sim: ['model', 'spec'],
  sandbox: [],
  workspace: ['events'],
  store: ['events'],
  tools: ['sandbox', 'workspace', 'events'],
  agent: ['model', 'tools', 'events'],
  orchestrator: ['spec', 'agent', 'model', 'tools', 'workspace', 'sandbox', 'store', 'events'],
  observe: ['store', 'events'],
  ui: ['observe', 'events'],
  bench: ['workspace', 'events'],
  cli: ['bench', 'ui', 'sim', 'observe', 'orchestrator', 'agent', 'model', 'tools', 'workspace', 'sandbox', 'store', 'events'],
};

export interface LayerViolation {
  readonly file: string;
  readonly specifier: string;
  readonly from: string;
  readonly to: string;
}

const IMPORT_PATTERN = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;

function layerOf(sourceRoot: string, file: string): string | undefined {
  const parts = relative(sourceRoot, file).split(sep);
  return parts.length > 1 ? parts[0] : undefined;
}

/** Every import in `file` that points against the arrows. */
export function violationsIn(sourceRoot: string, file: string, text: string): LayerViolation[] {
  const from = layerOf(sourceRoot, file);
  if (from === undefined) return [];
  const allowed = ALLOWED_IMPORTS[from];
  const found: LayerViolation[] = [];
  for (const match of text.matchAll(IMPORT_PATTERN)) {
    const specifier = match[1] ?? '';
    if (!specifier.startsWith('.')) continue;
    const to = layerOf(sourceRoot, resolve(dirname(file), specifier));
    if (to === undefined || to === from) continue;
    if (allowed === undefined || !allowed.includes(to)) found.push({ file, specifier, from, to });
  }
  return found;
}

/** The production sources under `dir`: TypeScript files that are not tests. */
export function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) files.push(path);
  }
  return files;
}

export function layerViolations(sourceRoot: string): LayerViolation[] {
  return sourceFiles(sourceRoot).flatMap((file) => violationsIn(sourceRoot, file, readFileSync(file, 'utf8')));
}
