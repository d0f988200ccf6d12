import { prepareDependencyLayer } from '../dependencies/dependency-cache.js';
import { openRepository } from '../git/repository.js';

/**
 * Prepares one dependency layer in a process of its own and prints the result as JSON, so a
 * test can run several processes against one cache at once.
 * Arguments: <repository> <cache folder> <commit>.
 */
const [root = '', cacheDir = '', commit = ''] = process.argv.slice(2);
const opened = await openRepository(root);
if (!opened.ok) throw new Error(opened.error);
const layer = await prepareDependencyLayer(opened.repo, { cacheDir, commit });
process.stdout.write(`${JSON.stringify(layer)}\n`);
