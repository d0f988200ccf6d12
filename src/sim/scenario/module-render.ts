import { posix } from 'node:path';
import type { JsonValue, SpecCase, SpecFunction, SpecModule } from '../../spec/colony-spec.js';

/**
 * The JavaScript the sim writes for a scenario module: the module itself, its node:test file,
 * and the line that re-exports it from the project's index.
 */

export interface RenderOptions {
  /**
   * Write a wrong first attempt: the first case of the first function is answered wrongly,
   * so the module's own test fails for real.
   */
  readonly buggy: boolean;
}

/** src/text/pad.js → src/text/pad.test.js */
export function testPathFor(modulePath: string): string {
  return modulePath.replace(/\.js$/, '.test.js');
}

/** The line that re-exports `modulePath` from the index: `export * from './text/pad.js';` */
export function indexLineFor(indexPath: string, modulePath: string): string {
  return `export * from '${specifierFrom(indexPath, modulePath)}';`;
}

/** How the file at `fromPath` imports the one at `toPath`: `./pad.js`, `../text/pad.js`. */
function specifierFrom(fromPath: string, toPath: string): string {
  const relative = posix.relative(posix.dirname(fromPath), toPath);
  return relative.startsWith('.') ? relative : `./${relative}`;
}

export function renderModuleSource(module: SpecModule, options: RenderOptions): string {
  const names = module.exports.map((fn) => fn.name).join(', ');
  const parts = module.exports.map((fn, index) => renderFunction(fn, options.buggy && index === 0));
  // The packages and the modules the spec says the module uses are imported, so the module
  // loads only where they are installed and on main.
  const imports = [...Object.keys(module.packages ?? {}), ...(module.uses ?? []).map((used) => specifierFrom(module.path, used))].map((name) => `import '${name}';\n`);
  const header = `// ${names}: see the task's colony-spec for the cases each must answer.\n`;
  return `${header}${imports.length === 0 ? '' : `\n${imports.join('')}`}\n${parts.join('\n\n')}\n`;
}

/**
 * The command that adds the module's packages to the project, each at its exact version, or
 * null when it uses none. Install scripts are not run: the packages are imported, not built.
 */
export function installCommandFor(module: SpecModule): string | null {
  const packages = Object.entries(module.packages ?? {}).map(([name, version]) => `${name}@${version}`);
  return packages.length === 0 ? null : `npm install --save-exact --ignore-scripts --no-audit --no-fund ${packages.join(' ')}`;
}

/**
 * The command that declares the module's packages in package.json without installing them
 * (`npm pkg set`, which needs no network), or null when it uses none: what a worker does when
 * its install cannot reach the registry, leaving the install to whoever sets the workspace up.
 */
export function declareCommandFor(module: SpecModule): string | null {
  const packages = Object.entries(module.packages ?? {}).map(([name, version]) => `'dependencies[${name}]=${version}'`);
  return packages.length === 0 ? null : `npm pkg set ${packages.join(' ')}`;
}

/** Whether a command's output says it could not reach the network (npm's `EAI_AGAIN`, `ENOTFOUND`, a refused connection). */
export function lacksNetwork(output: string): boolean {
  return /\b(EAI_AGAIN|ENOTFOUND|ECONNREFUSED|ENETUNREACH|EHOSTUNREACH)\b/.test(output);
}

export function renderModuleTest(module: SpecModule): string {
  const names = module.exports.map((fn) => fn.name).join(', ');
  const lines = [
    "import { test } from 'node:test';",
    "import assert from 'node:assert/strict';",
    `import { ${names} } from './${posix.basename(module.path)}';`,
  ];
  for (const fn of module.exports) {
    for (const item of fn.cases) {
      const call = `${fn.name}(${renderArgs(item.args)})`;
      lines.push(
        '',
        `test(${JSON.stringify(describeCase(fn.name, item))}, () => {`,
        `  assert.deepStrictEqual(${call}, ${JSON.stringify(item.returns)});`,
        '});',
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** How a case reads in test names and in notes: `padLeft("a", 3, "-") returns "--a"`. */
export function describeCase(name: string, item: SpecCase): string {
  return `${name}(${renderArgs(item.args)}) returns ${JSON.stringify(item.returns)}`;
}

function renderArgs(args: readonly JsonValue[]): string {
  return args.map((arg) => JSON.stringify(arg)).join(', ');
}

function renderFunction(fn: SpecFunction, buggy: boolean): string {
  return fn.body === undefined ? renderLookup(fn, buggy) : renderBody(fn, fn.body, buggy);
}

function renderBody(fn: SpecFunction, body: string, buggy: boolean): string {
  const params = (fn.params ?? []).join(', ');
  const lines = [`export function ${fn.name}(${params}) {`];
  const first = fn.cases[0];
  if (buggy && first !== undefined) {
    // The wrong first attempt: a special case that answers one of the listed cases wrongly.
    const key = JSON.stringify(first.args);
    lines.push(`  if (JSON.stringify([...arguments]) === ${JSON.stringify(key)}) return ${JSON.stringify(wrongAnswerFor(first.returns))};`);
  }
  for (const line of body.split('\n')) lines.push(line.length > 0 ? `  ${line}` : '');
  lines.push('}');
  return lines.join('\n');
}

/** A function given only by its cases: a table of JSON-encoded arguments to JSON-encoded answers. */
function renderLookup(fn: SpecFunction, buggy: boolean): string {
  const table = `${fn.name}Answers`;
  const entries = new Map<string, string>();
  fn.cases.forEach((item, index) => {
    const answer = buggy && index === 0 ? wrongAnswerFor(item.returns) : item.returns;
    entries.set(JSON.stringify(item.args), JSON.stringify(answer));
  });
  const rows = [...entries].map(([key, answer]) => `  [${JSON.stringify(key)}, ${JSON.stringify(answer)}],`);
  const signature = fn.params === undefined ? '...args' : fn.params.join(', ');
  const args = fn.params === undefined ? 'args' : '[...arguments]';
  return [
    `const ${table} = new Map([`,
    ...rows,
    ']);',
    '',
    `export function ${fn.name}(${signature}) {`,
    `  const key = JSON.stringify(${args});`,
    `  const answer = ${table}.get(key);`,
    `  if (answer === undefined) throw new Error(\`${fn.name} has no answer for the arguments \${key}\`);`,
    '  return JSON.parse(answer);',
    '}',
  ].join('\n');
}

/** A value that is close to `value` but never deep-equal to it: an off-by-one of its kind. */
export function wrongAnswerFor(value: JsonValue): JsonValue {
  if (typeof value === 'string') return value.length > 0 ? value.slice(0, -1) : ' ';
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'boolean') return !value;
  if (value === null) return 0;
  if (Array.isArray(value)) return value.length > 0 ? value.slice(0, -1) : [null];
  const keys = Object.keys(value);
  const last = keys[keys.length - 1];
  if (last === undefined) return { missing: true };
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== last));
}
