import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { copyExample, driveWorker, EXAMPLE_DIR, removeExampleCopies } from '../testing/tool-executor.js';
import { NOTES_FILE } from './worker-habits.js';

const padTask = readFileSync(join(EXAMPLE_DIR, 'tasks/01-pad.md'), 'utf8');

afterEach(removeExampleCopies);

/** colony's answer to a first merge that adds notes (`stray-notes.md`, shortened). */
const NOTES_REFUSAL = `Not merged: your change adds ${NOTES_FILE}, which look like notes about your work rather than files of the project. Delete them, then call \`merge_to_main\` again.`;

describe('the notes habit', () => {
  it('writes a summary of the work with its first merge; refused for it, deletes it and merges again', () => {
    const dir = copyExample();
    const run = driveWorker({
      dir,
      task: padTask,
      options: { ...DEFAULT_SIM_OPTIONS, notes: 1 },
      onMerge: (attempt) => (attempt === 1 ? { content: NOTES_REFUSAL, isError: true } : { content: 'merged into main as abc123', isError: false }),
    });
    const names = run.executed.map((each) => each.call.name);
    const firstMerge = names.indexOf('merge_to_main');
    expect(run.executed[firstMerge - 1]?.call).toMatchObject({ name: 'write_file', input: expect.stringContaining(`"path":"${NOTES_FILE}"`) as unknown });
    expect(run.executed[firstMerge - 1]?.call.input).toContain('src/text/pad.js');
    const removal = run.executed.findIndex((each) => each.call.name === 'run_command' && each.call.input.includes(`rm -f ${NOTES_FILE}`));
    expect(removal).toBeGreaterThan(firstMerge);
    expect(names.slice(removal + 1)).toEqual(['merge_to_main', 'submit_handoff']);
    expect(existsSync(join(dir, NOTES_FILE))).toBe(false);
    expect(run.handoff?.status).toBe('done');
  });

  it('lands what colony lets through: a merge that is not refused ends the habit there', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: { ...DEFAULT_SIM_OPTIONS, notes: 1 } });
    expect(run.executed.filter((each) => each.call.name === 'merge_to_main')).toHaveLength(1);
    expect(run.executed.some((each) => each.call.name === 'run_command' && each.call.input.includes('rm -f'))).toBe(false);
    expect(run.handoff?.status).toBe('done');
  });

  it('is off by default: no summary file is written', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: DEFAULT_SIM_OPTIONS });
    expect(run.executed.some((each) => each.call.input.includes(NOTES_FILE))).toBe(false);
    expect(existsSync(join(dir, NOTES_FILE))).toBe(false);
  });
});
