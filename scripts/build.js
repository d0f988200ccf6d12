#!/usr/bin/env node
// Compiles colony into dist/ as the package ships it: the TypeScript sources without their
// tests, the texts (prompts, tool descriptions) the code reads beside itself at run time, and
// zod in one file of its own (see vendorZod).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

const source = join(root, 'src');
for (const file of readdirSync(source, { recursive: true, encoding: 'utf8' })) {
  const isText = file.endsWith('.md') && !file.endsWith('README.md');
  if (isText && !file.split('/').includes('testing')) cpSync(join(source, file), join(dist, file));
}

await vendorZod();

/**
 * Every command reads events, and the event schemas are zod's, so every command loads zod. As
 * published, zod is about a hundred modules, sixty of them translations of its messages that
 * colony never shows, and loading them cost more CPU than starting Node itself. dist/ gets zod
 * as one file with only its English messages, and colony's compiled modules import that file.
 * It is the same zod release the lockfile pins; schemas still meet the AI SDK's own zod
 * through zod's registry on globalThis.
 */
async function vendorZod() {
  const zodDir = join(root, 'node_modules', 'zod');
  const vendored = join(dist, 'vendor', 'zod.js');
  mkdirSync(dirname(vendored), { recursive: true });
  const { version } = JSON.parse(readFileSync(join(zodDir, 'package.json'), 'utf8'));
  const license = readFileSync(join(zodDir, 'LICENSE'), 'utf8').trim();
  await build({
    entryPoints: [join(zodDir, 'index.js')],
    outfile: vendored,
    bundle: true,
    format: 'esm',
    platform: 'node',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    banner: { js: `/* zod ${version}, bundled for colony with English messages only.\n${license}\n*/` },
    plugins: [
      {
        name: 'english-messages-only',
        setup(builder) {
          builder.onResolve({ filter: /[/\\]locales[/\\]index\.js$/ }, () => ({ path: 'locales', namespace: 'english-messages-only' }));
          builder.onLoad({ filter: /.*/, namespace: 'english-messages-only' }, () => ({
            contents: `export { default as en } from ${JSON.stringify(join(zodDir, 'v4', 'locales', 'en.js'))};`,
            resolveDir: zodDir,
          }));
        },
      },
    ],
  });
  for (const file of readdirSync(dist, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.js') || file.startsWith(`vendor${sep}`)) continue;
    const path = join(dist, file);
    const text = readFileSync(path, 'utf8');
    if (!/from ['"]zod/.test(text)) continue;
    const specifier = relative(dirname(path), vendored).split(sep).join('/');
    const rewritten = text.replace(/from (['"])zod\1/g, `from '${specifier.startsWith('.') ? specifier : `./${specifier}`}'`);
    // A deep import (zod/v4, zod/mini) would load the published package beside the bundle.
    if (/from ['"]zod[/'"]/.test(rewritten)) throw new Error(`${file} imports zod in a way the build does not rewrite: import from 'zod' alone.`);
    writeFileSync(path, rewritten);
  }
}
