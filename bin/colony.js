#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so there is no build step to forget.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

// React, which draws the terminal UI, runs its production build unless told otherwise: the
// development build keeps a timing entry for every component it renders, so a UI left open
// for days grows without bound, and each frame costs more.
process.env.NODE_ENV ??= 'production';

// A reader that goes away (`colony events | head`) is not an error.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
});

// colony's own settings (JSX for the terminal UI among them), wherever it is started from.
register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
