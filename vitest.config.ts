import { availableParallelism } from 'node:os';
import { sep } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The end-to-end files (under test/: whole runs, processes, terminals) first, each group in
 * vitest's own order: they take a minute or two each where a unit file takes a second, so
 * starting them first leaves the unit files to fill in at the end instead of one long run
 * finishing alone. A fresh clone has no timings for vitest to order by, only file sizes.
 */
class EndToEndFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const endToEnd = (file: TestSpecification) => file.moduleId.includes(`${sep}test${sep}`);
    return [...sorted.filter(endToEnd), ...sorted.filter((file) => !endToEnd(file))];
  }
}

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // A file per core and one more, where vitest leaves one core free: many end-to-end files
    // spend most of their time waiting on the sim's latency (a run on a slowed sim uses a fifth
    // of its wall time in CPU), so one more file at a time fills the cores they leave idle. On
    // 2 cores the whole suite took 566 s this way against about 690 s with a file per core.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: EndToEndFirst },
    globalSetup: ['test/global-setup.ts'],
  },
});
