#!/usr/bin/env node
// The `colony` command. An installed package runs the JavaScript compiled into dist/; a
// checkout, which has the TypeScript sources, runs them through tsx, so there is no build step
// to forget while working on colony.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../src/cli/bin.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  // colony's own settings (JSX for the terminal UI among them), wherever it is started from.
  register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
  await import(source.href);
} else {
  await import('../dist/cli/bin.js');
}
