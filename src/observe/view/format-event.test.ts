import { describe, expect, it } from 'vitest';
import type { ColonyEvent, EventBody } from '../../events/event-types.js';
import { syntheticFailureHandoff } from '../../events/handoff.js';
import { describeEvent, formatEventLine } from './format-event.js';

const envelope = { seq: 1, v: 1, id: 'id', runId: 'run-1', agentId: 'worker-abc', ts: Date.UTC(2026, 10, 29, 14, 5, 6, 789) };

function event(body: EventBody): ColonyEvent {
  return { ...envelope, ...body } as ColonyEvent;
}

describe('formatEventLine', () => {
  it('shows the time of day, the agent and what happened', () => {
    const line = formatEventLine(
      event({ type: 'tool.ended', data: { step: 2, callId: 'c', name: 'run_command', ok: true, output: 'exit code: 1\n\nboom', durationMs: 1500 } }),
    );
    expect(line).toBe('14:05:06.789  worker-abc       run_command ok in 1.5s: exit code: 1');
  });

  it('summarises a tool call by its path or command, and flags malformed arguments', () => {
    expect(describeEvent(event({ type: 'tool.started', data: { step: 1, callId: 'c', name: 'read_file', input: '{"path":"src/a.js"}' } }))).toBe(
      'read_file src/a.js',
    );
    expect(describeEvent(event({ type: 'tool.started', data: { step: 1, callId: 'c', name: 'write_file', input: '{"path": "src/' } }))).toBe(
      'write_file (malformed arguments: {"path": "src/)',
    );
  });

  it('tells a standing notice, and its withdrawal, from a message told once', () => {
    expect(describeEvent(event({ type: 'agent.nudged', data: { step: 3, message: 'Files in flight across the run:\n- a.js', notice: 'files-in-flight' } }))).toBe(
      'files-in-flight notice at step 3: Files in flight across the run: - a.js',
    );
    expect(describeEvent(event({ type: 'agent.nudged', data: { step: 4, message: '', notice: 'files-in-flight' } }))).toBe('withdrew its files-in-flight notice at step 4');
    expect(describeEvent(event({ type: 'agent.nudged', data: { step: 5, message: 'Steps: 80 of 100' } }))).toBe('told at step 5: Steps: 80 of 100');
  });

  it('says a handoff colony wrote is synthetic', () => {
    const handoff = syntheticFailureHandoff({ summary: 'The worker ended without a handoff.' });
    expect(describeEvent(event({ type: 'handoff.submitted', data: { taskId: 't', handoff } }))).toBe(
      'handoff failed (synthetic): The worker ended without a handoff.',
    );
  });
});

describe('describeEvent for the run', () => {
  it('says which prompts the repository overrode, and when it overrode none', () => {
    expect(describeEvent(event({ type: 'prompts.loaded', data: { overridden: [] } }))).toBe("prompts loaded: colony's own");
    const overridden = [
      { name: 'planner', path: '/repo/.colony/prompts/planner.md', sha256: 'a'.repeat(64) },
      { name: 'worker', path: '/repo/.colony/prompts/worker.md', sha256: 'b'.repeat(64) },
    ];
    expect(describeEvent(event({ type: 'prompts.loaded', data: { overridden } }))).toBe(
      `prompts loaded: planner (sha256 ${'a'.repeat(12)}), worker (sha256 ${'b'.repeat(12)}) from the repository, colony's own for the rest`,
    );
  });
});

describe('describeEvent for the tree', () => {
  it('says which task was created, under which scope, and what it retries', () => {
    expect(
      describeEvent(
        event({ type: 'task.created', data: { taskId: 'task-2', parentTaskId: 'task-1', kind: 'planner', title: 'Lexer', scope: 'src/lexer', retryOf: null } }),
      ),
    ).toBe('planner task task-2 created (scope src/lexer): Lexer');
    expect(
      describeEvent(
        event({ type: 'task.created', data: { taskId: 'task-3', parentTaskId: 'task-1', kind: 'worker', title: 'Strings', scope: null, retryOf: 'task-9' } }),
      ),
    ).toBe('worker task task-3 created, retries task-9: Strings');
    const paths = ['src/a.js', 'src/a.test.js', 'src/index.js', 'docs/'];
    expect(
      describeEvent(event({ type: 'task.created', data: { taskId: 'task-4', parentTaskId: 'task-1', kind: 'worker', title: 'A', scope: null, retryOf: null, paths } })),
    ).toBe('worker task task-4 created, paths src/a.js, src/a.test.js, src/index.js and 1 more: A');
  });

  it('says where acceptance checks ran, whether a done claim failed them, and why they did not run', () => {
    const commit = '0123456789abcdef0123456789abcdef01234567';
    expect(describeEvent(event({ type: 'acceptance.started', data: { taskId: 'task-3', commit, commands: ['node --test', 'npm run lint'] } }))).toBe(
      'acceptance checks of task task-3 started on 0123456789ab: `node --test`, `npm run lint`',
    );
    const results = [
      { command: 'node --test', exitCode: 1, timedOut: false, durationMs: 800, output: 'fail' },
      { command: 'npm run lint', exitCode: 0, timedOut: false, durationMs: 300, output: 'ok' },
    ];
    expect(describeEvent(event({ type: 'acceptance.checked', data: { taskId: 'task-3', claimed: 'done', commit, passed: false, skipped: null, results } }))).toBe(
      'acceptance checks of task task-3: claimed done, checks failed on 0123456789ab: `node --test`',
    );
    expect(describeEvent(event({ type: 'acceptance.checked', data: { taskId: 'task-3', claimed: 'failed', commit, passed: false, skipped: null, results } }))).toBe(
      'acceptance checks of task task-3: checks failed on 0123456789ab: `node --test`',
    );
    expect(describeEvent(event({ type: 'acceptance.checked', data: { taskId: 'task-3', claimed: 'done', commit, passed: true, skipped: null, results: [] } }))).toBe(
      'acceptance checks of task task-3 passed on 0123456789ab (0 command(s))',
    );
    expect(describeEvent(event({ type: 'acceptance.checked', data: { taskId: 'task-3', claimed: 'done', commit: null, passed: false, skipped: 'nothing landed', results: [] } }))).toBe(
      'acceptance checks of task task-3 not run: nothing landed',
    );
  });

  it('says who claimed and who released a task', () => {
    expect(describeEvent(event({ type: 'task.claimed', data: { taskId: 'task-3', kind: 'worker', attempt: 2, holder: 'runner-a' } }))).toBe(
      'worker task task-3 claimed by runner-a (attempt 2)',
    );
    expect(describeEvent(event({ type: 'task.released', data: { taskId: 'task-3', reason: 'the run\nwas stopped' } }))).toBe(
      'task task-3 released: the run was stopped',
    );
  });

  it('says where a handoff went and where a message came from', () => {
    expect(describeEvent(event({ type: 'handoff.delivered', data: { taskId: 'task-3', parentTaskId: 'task-1', status: 'partial' } }))).toBe(
      'handoff partial of task task-3 delivered to task task-1',
    );
    expect(describeEvent(event({ type: 'handoff.delivered', data: { taskId: 'task-1', parentTaskId: null, status: 'done' } }))).toBe(
      'handoff done of task task-1 delivered to nobody (root task)',
    );
    expect(
      describeEvent(event({ type: 'message.received', data: { step: 4, fromTaskId: 'task-3', content: 'Handoff from task task-3 "Strings"\nstatus: done' } })),
    ).toBe('message from task task-3 at step 4: Handoff from task task-3 "Strings" status: done');
    expect(describeEvent(event({ type: 'message.received', data: { step: 5, fromTaskId: null, content: 'Stop the lexer.' } }))).toBe(
      'message from the user at step 5: Stop the lexer.',
    );
  });

  it('describes waiting, the scratchpad, the andon and a finished planner', () => {
    expect(describeEvent(event({ type: 'agent.waiting', data: { step: 7, openChildren: 3 } }))).toBe('waiting at step 7 for 3 open task(s)');
    expect(describeEvent(event({ type: 'scratchpad.written', data: { content: 'plan: a, b' } }))).toBe('scratchpad written (10 characters)');
    expect(describeEvent(event({ type: 'andon.changed', data: { taskId: 'task-1', paused: true, reason: 'main is red' } }))).toBe(
      'andon paused below task task-1: main is red',
    );
    expect(describeEvent(event({ type: 'andon.changed', data: { taskId: 'task-1', paused: false, reason: 'green again' } }))).toBe(
      'andon resumed below task task-1: green again',
    );
    expect(describeEvent(event({ type: 'planner.finished', data: { taskId: 'task-2', status: 'done', summary: 'Lexer built.' } }))).toBe(
      'planner finished task task-2 done: Lexer built.',
    );
  });

  it("describes the user's hold, a goal edit and a message left for a planner", () => {
    expect(describeEvent(event({ type: 'andon.changed', data: { taskId: null, paused: true, reason: 'reviewing main', by: 'user', andonSeq: 1 } }))).toBe(
      'spawning paused across the whole run by the user: reviewing main',
    );
    expect(describeEvent(event({ type: 'andon.changed', data: { taskId: null, paused: false, reason: 'looks fine', by: 'user', andonSeq: 2 } }))).toBe(
      'spawning released across the whole run by the user: looks fine',
    );
    expect(describeEvent(event({ type: 'goal.changed', data: { path: '/srv/GOAL.md', added: 3, removed: 1, goal: '# Goal' } }))).toBe(
      'goal file /srv/GOAL.md changed (3 line(s) added, 1 removed): the root planner is told',
    );
    expect(describeEvent(event({ type: 'goal.changed', data: { path: '/srv/GOAL.md', added: 0, removed: 0, error: 'the file is gone' } }))).toBe(
      'goal file /srv/GOAL.md cannot be read, so nothing was sent: the file is gone',
    );
    expect(describeEvent(event({ type: 'message.sent', data: { recipientTaskId: 'task-2', text: 'Skip\nthe docs.', inboxSeq: 4 } }))).toBe(
      'message left for task task-2: Skip the docs.',
    );
  });

  it('describes a worker limit the user changed and an agent the user stopped', () => {
    expect(describeEvent(event({ type: 'workers.changed', data: { workers: 1, previous: 4, by: 'user', requestSeq: 3 } }))).toBe('worker limit changed by the user: 4 to 1 at once');
    expect(describeEvent(event({ type: 'agent.stop-requested', data: { taskId: 'task-2', stoppedAgentId: 'worker-a', reason: 'wrong\nway', requestSeq: 4 } }))).toBe(
      'stopped by the user: worker-a on task task-2, which closes failed: wrong way',
    );
    expect(describeEvent(event({ type: 'agent.stop-requested', data: { taskId: 'task-2', stoppedAgentId: null, reason: 'not needed', requestSeq: 5 } }))).toBe(
      'stopped by the user: task task-2 before an agent started on it, which closes failed: not needed',
    );
  });
});

describe('describeEvent for providers and parked agents', () => {
  const provider = 'openai at https://api.openai.com/v1';

  it("says how a provider's limit moved, why, and how long it holds calls back", () => {
    expect(
      describeEvent(event({ type: 'provider.limited', data: { provider, from: 32, to: 16, reason: 'rate limited (HTTP 429)', holdMs: 7_000 } })),
    ).toBe('openai at https://api.openai.com/v1: lowered to 16 calls at once (from 32): rate limited (HTTP 429); no calls for 7.0s');
    expect(describeEvent(event({ type: 'provider.limited', data: { provider, from: 16, to: 17, reason: '16 calls in a row succeeded', holdMs: null } }))).toBe(
      'openai at https://api.openai.com/v1: raised to 17 calls at once (from 16): 16 calls in a row succeeded',
    );
  });

  it('says when a circuit opened, why and when it is tried again, and when it closed', () => {
    expect(
      describeEvent(event({ type: 'provider.circuit-opened', data: { provider, failures: 5, reason: 'network: connection refused', retryInMs: 30_000 } })),
    ).toBe('openai at https://api.openai.com/v1: circuit open after 5 failures in a row, next try in 30.0s: network: connection refused');
    expect(describeEvent(event({ type: 'provider.circuit-closed', data: { provider, openMs: 95_000 } }))).toBe(
      'openai at https://api.openai.com/v1: circuit closed after 95.0s, calls go through again',
    );
  });

  it('says why an agent was parked, for how long, and when it resumed', () => {
    expect(
      describeEvent(event({ type: 'agent.parked', data: { step: 7, kind: 'rate-limit', message: 'The provider is\nrate limiting.', attempts: 6, waitMs: 40_000 } })),
    ).toBe('parked at step 7 for 40.0s: rate-limit after 6 attempt(s): The provider is rate limiting.');
    expect(describeEvent(event({ type: 'agent.unparked', data: { step: 7, parkedMs: 40_012 } }))).toBe('resumed step 7 after 40.0s parked');
  });

  it('says how an agent rebuilt after a restart finishes the turn it was in', () => {
    expect(describeEvent(event({ type: 'agent.restored', data: { attempt: 2, step: 5, interrupted: 1, notStarted: 2 } }))).toBe(
      'restored after a restart in attempt 2, after step 5: 1 interrupted call(s) answered without running, 2 call(s) that never started to run',
    );
  });
});

describe('describeEvent for resuming and the run\'s own health', () => {
  it('says what a resume took up, and what a full disk and a hung worker did', () => {
    expect(describeEvent(event({ type: 'run.resumed', data: { resumes: 2, lastSeq: 812, released: ['task-a', 'task-b'], repaired: 1, clearedLocks: [] } }))).toBe(
      'run resumed (2nd time) after event 812: 2 task(s) taken back from the stopped runner, 1 event(s) restored from the task table',
    );
    expect(describeEvent(event({ type: 'disk.full', data: { path: '/srv/repo/.colony', freeBytes: 4096, message: 'SQLITE_FULL:\ndatabase or disk is full' } }))).toBe(
      "cannot write colony's state in /srv/repo/.colony (4096 bytes free): no new agent starts until it can; SQLITE_FULL: database or disk is full",
    );
    expect(describeEvent(event({ type: 'disk.recovered', data: { path: '/srv/repo/.colony', pausedMs: 12_500 } }))).toBe(
      "colony's state can be written again after 12.5s; agents start again",
    );
    expect(describeEvent(event({ type: 'agent.hung', data: { taskId: 'task-a', hungAgentId: 'worker-x', silentMs: 2_460_000, limitMs: 2_400_000 } }))).toBe(
      'worker-x recorded nothing for 2460.0s (limit 2400.0s): stopped, task task-a closed as failed',
    );
    expect(describeEvent(event({ type: 'workspace.reopened', data: { path: '/w/worker-x', branch: 'colony/worker-x', clearedLocks: ['/w/.git/worktrees/worker-x/index.lock'] } }))).toBe(
      'workspace colony/worker-x taken up again at /w/worker-x (cleared 1 stale git lock(s))',
    );
  });
});

describe('describeEvent for budgets', () => {
  it('says the limits, a subtree’s share, a warning and a limit used up with the figures', () => {
    expect(describeEvent(event({ type: 'budget.set', data: { tokens: 100_000, usd: 2.5, maxHours: 0.5, deadline: 0 } }))).toBe(
      'budget set: 100,000 tokens, $2.50, 0.5 hour(s)',
    );
    expect(describeEvent(event({ type: 'budget.allotted', data: { taskId: 'task-2', parentTaskId: 'task-1', tokens: 40_000, usd: null } }))).toBe(
      'subtree task-2 may spend 40,000 tokens (its share of what task-1 had left)',
    );
    const figures = { taskId: 'task-1', scope: 'run' as const, measure: 'tokens' as const, spent: 81_250, limit: 100_000 };
    expect(describeEvent(event({ type: 'budget.warned', data: figures }))).toBe(
      'budget warning: the run at 81% of its token budget: 81,250 tokens of 100,000 tokens',
    );
    expect(describeEvent(event({ type: 'budget.exhausted', data: { ...figures, taskId: 'task-2', scope: 'subtree', measure: 'usd', spent: 0.42, limit: 0.5, reserved: 0.09, agents: 3 } }))).toBe(
      "budget used up: subtree task-2's budget in dollars of $0.5000: $0.4200 spent, $0.0900 held back for the last calls of 3 agent(s)",
    );
    expect(describeEvent(event({ type: 'budget.exhausted', data: { ...figures, measure: 'time', spent: 1_800_500, limit: 1_800_000, reserved: 0, agents: 2 } }))).toBe(
      "budget used up: the run's time limit of 30 minutes: 30 minutes passed",
    );
  });
});

describe('describeEvent for merges', () => {
  it('says which branch a merge is about to land, as which commit, onto which', () => {
    const data = { commit: 'c'.repeat(40), mainBefore: 'b'.repeat(40), branch: 'colony/worker-1' };
    expect(describeEvent(event({ type: 'merge.intended', data }))).toBe('merge intended: colony/worker-1 as cccccccccccc onto bbbbbbbbbbbb');
  });
});
