import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runGit } from '../src/workspace/git/git.js';

/** Modules per folder: more than 8, so every folder goes to a sub-planner of its own. */
const MODULES_PER_AREA = 10;

/**
 * A generated project of `modules` tiny modules in folders of ten, for measuring many agents at
 * once rather than the code they write: each module exports one function that adds a constant.
 * Its tests run in one process with the runner the stdlib example uses.
 */
export function generatedGoal(modules: number): Record<string, string> {
  const specModules = Array.from({ length: modules }, (_, index) => {
    const area = String(Math.floor(index / MODULES_PER_AREA)).padStart(3, '0');
    return {
      path: `src/part${area}/add${index}.js`,
      exports: [
        {
          name: `add${index}`,
          params: ['value'],
          body: `return value + ${index};`,
          cases: [
            { args: [1], returns: 1 + index },
            { args: [-index], returns: 0 },
          ],
        },
      ],
    };
  });
  const spec = { project: { test: 'node scripts/test.js', index: 'src/index.js' }, modules: specModules };
  return {
    'GOAL.md': `# ${modules} adders\n\nBuild ${modules} tiny modules, each with its test, all re-exported from \`src/index.js\`.\n\n\`\`\`colony-spec\n${JSON.stringify(spec, null, 2)}\n\`\`\`\n`,
    'package.json': `${JSON.stringify({ name: 'adders', type: 'module', private: true, scripts: { test: 'node scripts/test.js' } }, null, 2)}\n`,
    'src/index.js': '// Every module is re-exported here.\n',
    'scripts/test.js': readFileSync(new URL('../examples/stdlib/scripts/test.js', import.meta.url), 'utf8'),
  };
}

/** A repository at `repoDir` holding the generated goal of `modules` modules in one commit on `main`. */
export async function writeGeneratedRepository(repoDir: string, modules: number): Promise<void> {
  for (const [path, content] of Object.entries(generatedGoal(modules))) {
    mkdirSync(join(repoDir, path, '..'), { recursive: true });
    writeFileSync(join(repoDir, path), content);
  }
  await runGit(repoDir, ['init', '-q', '-b', 'main']);
  await runGit(repoDir, ['add', '-A']);
  await runGit(repoDir, ['commit', '-q', '-m', 'start']);
}
