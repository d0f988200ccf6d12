import { interruptedAnswer } from '../../agent/agent-restore.js';
import type { EventBody } from '../../events/event-types.js';
import type { ToolCall } from '../../model/messages.js';
import type { ToolResult } from '../../tools/tool.js';
import { settleInterruptedMerge } from '../../workspace/merge/interrupted-merge.js';
import type { MergeIntent } from '../../workspace/merge/merge-outcome.js';
import { moveWorkspaceTo } from '../../workspace/merge/in-process-merge.js';
import type { Repository } from '../../workspace/git/repository.js';
import type { Workspace } from '../../workspace/workspace.js';
import { startedSeqOf, type PriorAgent } from './prior-agents.js';

export interface InterruptedCallsOptions {
  readonly prior: PriorAgent;
  readonly repo: Repository;
  /** Records under the restored agent. */
  readonly record: (event: EventBody) => void;
  /** Told a commit an interrupted merge had landed, as a live landing would be (workers only). */
  readonly onLanded?: (commit: string) => Promise<void>;
  /** The worker's workspace, brought to a commit an interrupted merge had landed, as the merge would have. */
  readonly workspace?: Workspace;
}

/**
 * How a restored agent is answered for the call that was running when colony stopped. Calls
 * whose effect colony can still see are answered with what happened: a merge whose recorded
 * intent is on main landed; a task the store holds was created. Anything else gets the
 * plain "interrupted by a restart" answer: nothing is ever run a second time behind the
 * agent's back.
 */
export function answerInterruptedCalls(options: InterruptedCallsOptions): (call: ToolCall) => Promise<ToolResult> {
  return async (call) => {
    switch (call.name) {
      case 'merge_to_main':
        return answerMerge(options, call);
      case 'create_task':
      case 'delegate':
        return answerPublish(options, call);
      default:
        return interruptedAnswer(call);
    }
  };
}

async function answerMerge(options: InterruptedCallsOptions, call: ToolCall): Promise<ToolResult> {
  const { prior, repo } = options;
  const since = startedSeqOf(prior, call.id);
  const intents: MergeIntent[] = prior.events.flatMap((event) =>
    event.type === 'merge.intended' && event.seq > since ? [{ commit: event.data.commit, mainBefore: event.data.mainBefore, branch: event.data.branch }] : [],
  );
  const settled = await settleInterruptedMerge(repo, intents);
  if (!settled.landed) {
    const plain = interruptedAnswer(call);
    const note = intents.length === 0 ? 'it had not reached the point of moving' : 'it had not moved';
    return { ok: false, error: `${plain.ok ? '' : plain.error}. The merge did not land (${note} ${repo.mainBranch}): call merge_to_main again.` };
  }
  const intent = intents.find((candidate) => candidate.commit === settled.commit);
  // A resume killed after answering this once already recorded the landing: not twice.
  const recordedBefore = prior.events.some((event) => event.type === 'merge.landed' && event.seq > since && event.data.commit === settled.commit);
  if (!recordedBefore) {
    options.record({
      type: 'merge.landed',
      data: { commit: settled.commit, mainBefore: intent?.mainBefore ?? '', attempts: 1, files: [...settled.files], durationMs: 0 },
    });
    await options.onLanded?.(settled.commit);
  }
  // The merge would have brought the workspace to the landed commit; a restart kept it from it.
  const moved = options.workspace === undefined ? null : await moveWorkspaceTo(options.workspace, settled.commit);
  const behind =
    moved === null || moved.ok ? '' : ` Your workspace still shows the files as they were before it (${moved.error}); keep that in mind before changing more.`;
  return {
    ok: true,
    output: `merged into ${repo.mainBranch} as ${settled.commit.slice(0, 12)}; files: ${settled.files.join(', ') || '(none)'}\ncolony restarted while this merge ran, after it had landed.${behind}`,
  };
}

function answerPublish(options: InterruptedCallsOptions, call: ToolCall): ToolResult {
  const since = startedSeqOf(options.prior, call.id);
  const created = options.prior.events.find((event) => event.type === 'task.created' && event.seq > since);
  if (created === undefined || created.type !== 'task.created') return interruptedAnswer(call);
  const { taskId, title, scope } = created.data;
  const first = call.name === 'delegate' ? `Delegated task ${taskId} (scope ${scope ?? ''}): ${title}` : `Created task ${taskId}: ${title}`;
  return {
    ok: true,
    output: `${first}\nIts handoff will arrive as a message in this conversation when it ends.\n(colony restarted while this call ran; the task had been created.)`,
  };
}
