import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { createPlannerSession, goalWith, range } from '../testing/planner-tools.js';
import { copyExample, driveWorker, EXAMPLE_DIR, removeExampleCopies } from '../testing/tool-executor.js';

const padTask = readFileSync(join(EXAMPLE_DIR, 'tasks/01-pad.md'), 'utf8');
const NOTICE = 'Files in flight across the run: none.\n\nBudget used up: the run\'s token budget of 1,000 tokens was used up. This is your last model call.';

afterEach(removeExampleCopies);

describe('the sim told its budget is used up', () => {
  it('as a worker, hands off partial in that answer with what it did and what was next', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: DEFAULT_SIM_OPTIONS, interject: (turn) => (turn === 3 ? NOTICE : null) });
    expect(run.turns).toBe(4);
    expect(run.handoff).toMatchObject({
      status: 'partial',
      summary: expect.stringMatching(/^The budget was used up before I finished src\/text\/pad\.js: I wrote src\/text\/pad\.js, src\/text\/pad\.test\.js, I had not run the tests yet, and nothing of it landed on main\.$/),
      follow_ups: [expect.stringMatching(/^What I was about to do next: /)],
    });
  });

  it('as a worker with nothing done, hands off blocked', () => {
    const dir = copyExample();
    const run = driveWorker({ dir, task: padTask, options: DEFAULT_SIM_OPTIONS, interject: (turn) => (turn === 0 ? NOTICE : null) });
    expect(run.turns).toBe(1);
    expect(run.handoff).toMatchObject({ status: 'blocked', summary: expect.stringContaining('I changed nothing') });
  });

  it('as a planner, publishes nothing more and finishes partial, naming what did not land', () => {
    const paths = range('src/text/t', 3);
    const session = createPlannerSession({ brief: goalWith(paths) });
    session.turn();
    const [first, second] = session.tasks;
    if (first === undefined || second === undefined) throw new Error('expected tasks');
    session.handOff(first.id, { status: 'done', summary: 'Built it.' });
    session.handOff(second.id, { status: 'failed', summary: 'Broke.' });
    session.messages.push({ role: 'user', content: NOTICE });
    const answer = session.turn();
    expect(answer.toolCalls.map((call) => call.name)).toEqual(['finish']);
    expect(session.finishes).toEqual([
      {
        status: 'partial',
        summary: 'The budget was used up: 1 of 3 modules of the goal landed, 1 task still out; I did not run `node --test` on main.',
        notes: [`not landed: ${paths[1] ?? ''}`, `not landed: ${paths[2] ?? ''}`],
        follow_ups: [`Build what is left with more budget: ${paths[1] ?? ''}, ${paths[2] ?? ''}.`],
      },
    ]);
  });
});
