import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bisectFirstBad } from '../../workspace/green/bisect.js';
import { commitsBetween } from '../../workspace/green/green-branch.js';
import { createMergeTestSetup, type MergeTestSetup } from '../../workspace/testing/merge-setup.js';
import { unconfinedCommandRunners } from '../setup/command-sandbox.js';
import { checkCommit } from './green-snapshot.js';

const COMMITS = 20;

/**
 * A history of 20 commits after Start, commit i writing `version` = i. "Commit k breaks the
 * check" is the check `version <= k` (index k holds version k + 1): one repository serves every
 * k, and each check still runs for real in a view of the commit bisection asks about.
 */
describe('bisecting a scripted history with the real check', () => {
  let setup: MergeTestSetup;
  let good: string;
  let history: string[];

  beforeAll(async () => {
    setup = await createMergeTestSetup({ version: '0\n' });
    good = await setup.mainCommit();
    for (let version = 1; version <= COMMITS; version += 1) {
      await setup.temporary.write('version', `${version}\n`);
      await setup.temporary.commitAll(`Version ${version}`);
    }
    history = await commitsBetween(setup.repo, good, await setup.mainCommit());
    if (history.length !== COMMITS) throw new Error(`expected ${COMMITS} commits after Start, listed ${history.length}`);
  });

  afterAll(async () => {
    await setup.temporary.remove();
  });

  for (const parallel of [1, 3]) {
    it(`finds the commit that broke the check for every k, ${parallel} check${parallel === 1 ? '' : 's'} at a time`, { timeout: 180_000 }, async () => {
      const viewsDir = join(setup.temporary.base, `views-${parallel}`);
      const commands = unconfinedCommandRunners();
      for (let broken = 0; broken < COMMITS; broken += 1) {
        const asked = new Map<number, number>();
        const checkedCommits: string[] = [];
        const isBad = async (index: number): Promise<boolean> => {
          asked.set(index, (asked.get(index) ?? 0) + 1);
          const commit = history[index] ?? '';
          const result = await checkCommit({
            repo: setup.repo,
            viewsDir,
            commit,
            command: `test "$(cat version)" -le ${broken}`,
            commands,
            timeoutMs: 20_000,
            signal: new AbortController().signal,
          });
          if (!result.ok) throw new Error(result.error);
          checkedCommits.push(result.check.commit);
          return !result.check.passed;
        };
        const result = await bisectFirstBad(history.length, isBad, { parallel });
        expect(result.firstBad, `broken at ${broken}`).toBe(broken);
        expect([...asked.values()].every((times) => times === 1)).toBe(true);
        expect(result.checked).toHaveLength(asked.size);
        expect(new Set(checkedCommits)).toEqual(new Set(result.checked.map((index) => history[index])));
        if (parallel === 1) expect(asked.size).toBeLessThanOrEqual(Math.ceil(Math.log2(COMMITS)));
        else expect(asked.size).toBeLessThanOrEqual(parallel * Math.ceil(Math.log(COMMITS) / Math.log(parallel + 1)));
      }
    });
  }
});
