import { mkdir } from 'node:fs/promises';
import { describeFailure, runGit } from '../src/workspace/git/git.js';

/**
 * A bare repository at `dir` with one commit of `files` small text files, a hundred to a
 * directory, as a stand-in for a large project when no real one is given. Written with
 * `git fast-import`, so making it takes seconds, not minutes. Returns `dir`.
 */
export async function generateManyFileRepository(dir: string, files: number): Promise<string> {
  await mkdir(dir, { recursive: true });
  const init = await runGit(dir, ['init', '--quiet', '--bare', '--initial-branch=main']);
  if (init.code !== 0) throw new Error(describeFailure(['init'], init));
  const lines = ['commit refs/heads/main', 'committer colony <colony@localhost> 1700000000 +0000', 'data 20', 'A generated project', ''];
  for (let index = 0; index < files; index += 1) {
    const directory = `src/part-${String(Math.floor(index / 100)).padStart(3, '0')}`;
    const body = `export const value${index} = ${index};\n${'// a line of filler so the file has a realistic size\n'.repeat(12)}`;
    lines.push(`M 100644 inline ${directory}/module-${index}.ts`, `data ${Buffer.byteLength(body)}`, body);
  }
  const imported = await runGit(dir, ['fast-import', '--quiet'], { input: `${lines.join('\n')}\n` });
  if (imported.code !== 0) throw new Error(describeFailure(['fast-import'], imported));
  return dir;
}
