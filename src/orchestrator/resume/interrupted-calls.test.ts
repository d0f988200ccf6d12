import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rebuildConversation } from '../../agent/conversation-rebuild.js';
import type { EventBody } from '../../events/event-types.js';
import { createMemoryEventStore } from '../../store/events/memory-event-store.js';
import { mergeToMain } from '../../workspace/merge/merge-to-main.js';
import { advanceMainNow, createMergeTestSetup, type MergeTestSetup } from '../../workspace/testing/merge-setup.js';
import { answerInterruptedCalls } from './interrupted-calls.js';
import type { PriorAgent } from './prior-agents.js';

const AGENT = 'worker-1';

/** The log of a worker that colony died under while `call` ran, after `during` was recorded. */
async function priorAgent(call: { id: string; name: string; input: string }, during: readonly EventBody[]): Promise<PriorAgent> {
  const store = createMemoryEventStore();
  const record = (body: EventBody) => store.append({ ...body, runId: 'run-1', agentId: AGENT });
  record({ type: 'agent.started', data: { role: 'worker', taskId: 'task-1', title: 'Pad', model: 'sim', systemPrompt: 'prompt', task: 'Build pad.', tools: ['merge_to_main'] } });
  record({
    type: 'model.responded',
    data: { step: 1, text: '', toolCalls: [call], finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 }, costUsd: null, durationMs: 1, attempts: 1 },
  });
  record({ type: 'tool.started', data: { step: 1, callId: call.id, name: call.name, input: call.input } });
  for (const body of during) record(body);
  const events = await store.read();
  return { agentId: AGENT, role: 'worker', events, conversation: rebuildConversation(events) };
}

describe('answering the call colony died in', () => {
  let setup: MergeTestSetup;

  beforeEach(async () => {
    setup = await createMergeTestSetup({ 'README.md': '# project\n' });
  });

  afterEach(async () => {
    await setup.temporary.remove();
  });

  it('tells a worker its merge landed when the intent it recorded is on the trunk, and counts the commit as its own', async () => {
    const workspace = await setup.workspace(AGENT);
    await writeFile(join(workspace.path, 'pad.js'), 'export const pad = 1;\n');
    // Another merge landed first, so this one lands a commit replayed onto it, not its own.
    advanceMainNow(setup.repo);
    const intents: EventBody[] = [];
    let headAtIntent = '';
    const outcome = await mergeToMain(setup.repo, workspace, {
      message: 'Add pad',
      onIntent: (intent) => {
        intents.push({ type: 'merge.intended', data: intent });
        headAtIntent = execFileSync('git', ['-C', workspace.path, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
      },
    });
    expect(outcome.status).toBe('landed');
    // The process died after the swap, before merge.landed was recorded and before the
    // workspace was brought to the landed commit.
    await setup.temporary.git(['-C', workspace.path, 'reset', '--quiet', '--keep', headAtIntent]);
    const prior = await priorAgent({ id: 'call-1', name: 'merge_to_main', input: '{"message":"Add pad"}' }, intents);
    const recorded: EventBody[] = [];
    const landed: string[] = [];
    const answer = answerInterruptedCalls({ prior, repo: setup.repo, record: (event) => recorded.push(event), onLanded: async (commit) => void landed.push(commit), workspace });
    const result = await answer({ id: 'call-1', name: 'merge_to_main', input: '{"message":"Add pad"}' });
    const mainCommit = await setup.mainCommit();
    expect(headAtIntent).not.toBe(mainCommit);
    expect(result).toMatchObject({ ok: true, output: expect.stringContaining(`merged into main as ${mainCommit.slice(0, 12)}; files: pad.js`) });
    expect(landed).toEqual([mainCommit]);
    expect(recorded).toMatchObject([{ type: 'merge.landed', data: { commit: mainCommit, files: ['pad.js'] } }]);
    // The workspace is where the merge would have left it: on the landed commit.
    expect((await setup.temporary.git(['-C', workspace.path, 'rev-parse', 'HEAD'])).trim()).toBe(mainCommit);
  });

  it('tells a worker its merge did not land when its intent never reached the trunk, and to merge again', async () => {
    const before = await setup.mainCommit();
    const neverLanded: EventBody = { type: 'merge.intended', data: { commit: before.replace(/^./, before.startsWith('a') ? 'b' : 'a'), mainBefore: before, branch: `colony/${AGENT}` } };
    const prior = await priorAgent({ id: 'call-1', name: 'merge_to_main', input: '{"message":"Add pad"}' }, [neverLanded]);
    const answer = answerInterruptedCalls({ prior, repo: setup.repo, record: () => undefined });
    const result = await answer({ id: 'call-1', name: 'merge_to_main', input: '{}' });
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/^interrupted by a restart: .*The merge did not land \(it had not moved main\): call merge_to_main again\.$/s) });
    expect(await setup.mainCommit()).toBe(before);
  });

  it('names the task a planner’s interrupted create_task made, and gives the plain answer when none was made', async () => {
    const created: EventBody = { type: 'task.created', data: { taskId: 'task-9', parentTaskId: 'task-1', kind: 'worker', title: 'Build pad', scope: null, retryOf: null } };
    const call = { id: 'call-1', name: 'create_task', input: '{"title":"Build pad","brief":"b"}' };
    const made = await answerInterruptedCalls({ prior: await priorAgent(call, [created]), repo: setup.repo, record: () => undefined })(call);
    expect(made).toMatchObject({ ok: true, output: expect.stringMatching(/^Created task task-9: Build pad\n/) });
    const notMade = await answerInterruptedCalls({ prior: await priorAgent(call, []), repo: setup.repo, record: () => undefined })(call);
    expect(notMade).toEqual({ ok: false, error: expect.stringMatching(/^interrupted by a restart/) });
    const command = { id: 'call-2', name: 'run_command', input: '{"command":"npm test"}' };
    const other = await answerInterruptedCalls({ prior: await priorAgent(command, []), repo: setup.repo, record: () => undefined })(command);
    expect(other).toEqual({ ok: false, error: 'interrupted by a restart: colony stopped while this call was running, and the command was killed; check the workspace before repeating it' });
  });
});
