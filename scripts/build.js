#!/usr/bin/env node
// Compiles colony into dist/ as the package ships it: the TypeScript sources without their
// tests, and the texts (prompts, tool descriptions) the code reads beside itself at run time.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

const source = join(root, 'src');
for (const file of readdirSync(source, { recursive: true, encoding: 'utf8' })) {
  const isText = file.endsWith('.md') && !file.endsWith('README.md');
  if (isText && !file.split('/').includes('testing')) cpSync(join(source, file), join(dist, file));
}
