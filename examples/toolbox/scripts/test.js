// Runs every *.test.js under src/ in this one process, in path order.
//
// `node --test` starts a separate process for each test file; with this many small test files
// that costs seconds of CPU per run, paid again by everyone who runs the tests at once. Here
// node:test runs the tests in-process instead: its report (TAP when the output is not a
// terminal) still names every failing test, and it sets a non-zero exit code when one fails.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const sourceDir = fileURLToPath(new URL('../src/', import.meta.url));
const testFiles = readdirSync(sourceDir, { recursive: true })
  .map((file) => file.split('\\').join('/'))
  .filter((file) => file.endsWith('.test.js'))
  .sort();

for (const file of testFiles) {
  try {
    await import(pathToFileURL(join(sourceDir, file)).href);
  } catch (error) {
    // A file that cannot load fails as a test of its own, so the other files still run.
    test(`src/${file} loads`, () => {
      throw error;
    });
  }
}
