/**
 * What agents of a large generated run say and see: tool inputs, tool outputs and model words
 * of the sizes a real run logs (most a few hundred bytes, file reads and test runs a few KB).
 * Texts come from small pools built once, so writing a million events is not spent making text.
 */

/** Numbers in [0, 1) from a seeded sequence. */
export type Random = () => number;

export interface ToolUse {
  readonly name: string;
  readonly input: string;
  readonly output: string;
  readonly ok: boolean;
}

const WORDS = ['parse', 'token', 'value', 'render', 'state', 'config', 'cache', 'queue', 'schema', 'route', 'buffer', 'record', 'error', 'result', 'index', 'batch'];
const POOL = 64;

function pick<T>(random: Random, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick needs a non-empty list');
  return item;
}

function word(random: Random): string {
  return pick(random, WORDS);
}

function codeLine(random: Random): string {
  const name = `${word(random)}${word(random).replace(/^./, (first) => first.toUpperCase())}`;
  switch (Math.floor(random() * 4)) {
    case 0:
      return `export function ${name}(input: ${word(random)}Input): ${word(random)}Result {`;
    case 1:
      return `  const ${name} = await ${word(random)}.${word(random)}(${word(random)}, { limit: ${Math.floor(random() * 500)} });`;
    case 2:
      return `  if (${name} === undefined) throw new Error('${word(random)} ${word(random)} is missing');`;
    default:
      return `  return { ${word(random)}: ${name}, ${word(random)}: ${Math.floor(random() * 100)} };`;
  }
}

function linesOf(random: Random, bytes: number, line: (random: Random) => string): string {
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const next = line(random);
    lines.push(next);
    size += next.length + 1;
  }
  return lines.join('\n');
}

function testLine(random: Random): string {
  const passed = random() < 0.9;
  return ` ${passed ? '✓' : '×'} src/${word(random)}/${word(random)}.test.ts > ${word(random)} ${word(random)} ${passed ? '' : 'expected 3 to be 4 '}(${Math.floor(random() * 90)} ms)`;
}

function searchLine(random: Random): string {
  return `src/${word(random)}/${word(random)}.ts:${Math.floor(random() * 400)}:${codeLine(random)}`;
}

function sized(random: Random, low: number, high: number): number {
  return Math.floor(low + random() * (high - low));
}

interface Pools {
  readonly files: string[];
  readonly testRuns: string[];
  readonly searches: string[];
  readonly listings: string[];
  readonly thoughts: string[];
}

function buildPools(random: Random): Pools {
  const many = (make: () => string) => Array.from({ length: POOL }, make);
  return {
    files: many(() => linesOf(random, sized(random, 600, 4_000), codeLine)),
    testRuns: many(() => `> vitest run\n\n${linesOf(random, sized(random, 200, 2_400), testLine)}\n\n Tests  ${Math.floor(random() * 80)} passed`),
    searches: many(() => linesOf(random, sized(random, 200, 900), searchLine)),
    listings: many(() => linesOf(random, sized(random, 150, 500), (next) => `src/${word(next)}/${word(next)}.ts`)),
    thoughts: many(() => linesOf(random, sized(random, 80, 400), (next) => `I will check how the ${word(next)} ${word(next)} handles the ${word(next)} before changing it.`).replace(/\n/g, ' ')),
  };
}

/** Tool calls and model words, drawn from pools built from `random`. */
export interface RunTexts {
  toolUse(random: Random, module: string): ToolUse;
  thought(random: Random): string;
}

export function createRunTexts(random: Random): RunTexts {
  const pools = buildPools(random);
  return {
    toolUse(next, module) {
      const path = `src/${module}/${word(next)}.ts`;
      const roll = next();
      if (roll < 0.3) return { name: 'read_file', input: JSON.stringify({ path }), output: pick(next, pools.files), ok: true };
      if (roll < 0.55) {
        const ok = next() < 0.9;
        return { name: 'run_command', input: JSON.stringify({ command: `npm test -- ${module}` }), output: `${ok ? '' : 'exit code 1\n'}${pick(next, pools.testRuns)}`, ok };
      }
      if (roll < 0.8) {
        const input = JSON.stringify({ path, old: codeLine(next), new: codeLine(next) });
        return { name: 'edit_file', input, output: `edited ${path}: replaced 1 line`, ok: true };
      }
      if (roll < 0.92) return { name: 'search', input: JSON.stringify({ pattern: `${word(next)}${word(next)}` }), output: pick(next, pools.searches), ok: true };
      return { name: 'list_files', input: JSON.stringify({ path: `src/${module}` }), output: pick(next, pools.listings), ok: true };
    },
    thought: (next) => pick(next, pools.thoughts),
  };
}

const ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

/** Eight readable characters, as colony's short ids end (`worker-3f9k2m8q`). */
export function shortId(random: Random): string {
  let id = '';
  for (let index = 0; index < 8; index += 1) id += ALPHABET[Math.floor(random() * ALPHABET.length)] ?? 'a';
  return id;
}

/** A commit-like hex string. */
export function hex(random: Random, length: number): string {
  let text = '';
  for (let index = 0; index < length; index += 1) text += Math.floor(random() * 16).toString(16);
  return text;
}
