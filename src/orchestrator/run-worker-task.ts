import { readFileSync } from 'node:fs';
import { runAgent, type AgentLoopOptions, type AgentOutcome } from '../agent/agent-loop.js';
import type { ColonyEvent } from '../events/event-types.js';
import { syntheticFailureHandoff, type Handoff } from '../events/handoff.js';
import { newShortId } from '../events/ids.js';
import type { ChatModel } from '../model/chat-model.js';
import type { EventStore } from '../store/event-store.js';
import { createWorkerFileTools } from '../tools/worker-file-tools.js';
import { createMergeToMainTool } from '../tools/merge-to-main-tool.js';
import { createSubmitHandoffTool } from '../tools/submit-handoff-tool.js';
import type { Repository } from '../workspace/repository.js';
import { createWorkspace, keepWorkspace, removeWorkspace } from '../workspace/workspace.js';
import { unmergedWork } from '../workspace/workspace-status.js';
import { commandMergeCheck } from './merge-check.js';
import { createAgentRecorder, endAgent } from './agent-recorder.js';
import { linkSharedDependencies } from './shared-dependencies.js';

const WORKER_PROMPT = readFileSync(new URL('./prompts/worker.md', import.meta.url), 'utf8').trim();

export interface WorkerTask {
  readonly id: string;
  readonly title: string;
  /** The brief, in Markdown, exactly as the worker will read it. */
  readonly body: string;
}

export interface RunWorkerTaskOptions {
  readonly repo: Repository;
  readonly store: EventStore;
  readonly model: ChatModel;
  readonly task: WorkerTask;
  readonly runId: string;
  /** Where workspaces are made, one folder each. */
  readonly workspacesDir: string;
  /** A shared dependency layer to link into the new workspace (see `linkDependencyLayer`); none when null or absent. */
  readonly dependencyLayer?: string | null;
  readonly maxSteps: number;
  readonly signal?: AbortSignal;
  /** Told every event as it is recorded, for live progress. */
  readonly onEvent?: (event: ColonyEvent) => void;
  /** Awaited after each landing of the worker's work on the trunk, before the agent hears of it. */
  readonly onLanded?: (commit: string) => Promise<void>;
  /** A command the worker's merges must pass, run on its work replayed onto the trunk (`--merge-check`). */
  readonly mergeCheck?: string;
  /** The planner agent that published the task, when it came from a planner. */
  readonly parentAgentId?: string | null;
  /** Which claim of the task this is, from 1. */
  readonly attempt?: number;
}

export interface WorkerResult {
  readonly agentId: string;
  readonly handoff: Handoff;
  /** The workspace, when it was kept because it holds work that did not land. */
  readonly keptWorkspace: string | null;
}

/**
 * Runs one worker on one task from start to end: a fresh workspace, the agent loop with the
 * worker's tools, exactly one handoff (the agent's own, or a synthetic failure when it ended
 * without one), and cleanup that never discards work that did not land.
 */
export async function runWorkerTask(options: RunWorkerTaskOptions): Promise<WorkerResult> {
  const { repo, store, task, runId } = options;
  const agentId = newShortId('worker');
  const recorder = createAgentRecorder(store, runId, agentId, options.onEvent);

  const started = performance.now();
  const workspace = await createWorkspace(repo, { id: agentId, parentDir: options.workspacesDir });
  recorder.record({
    type: 'workspace.created',
    data: {
      path: workspace.path,
      branch: workspace.branch,
      baseCommit: workspace.baseCommit,
      durationMs: Math.round(performance.now() - started),
    },
  });
  if (options.dependencyLayer !== undefined && options.dependencyLayer !== null) {
    await linkSharedDependencies(workspace.path, options.dependencyLayer, recorder.record);
  }

  let submitted: Handoff | null = null;
  const landed: string[] = [];
  const tools = [
    ...createWorkerFileTools(workspace.path),
    createMergeToMainTool(repo, workspace, {
      onEvent: recorder.record,
      ...(options.mergeCheck === undefined ? {} : { check: commandMergeCheck(options.mergeCheck, options.signal) }),
      onLanded: async (commit) => {
        landed.push(commit);
        await options.onLanded?.(commit);
      },
    }),
    createSubmitHandoffTool((handoff) => {
      submitted = handoff;
    }),
  ];
  recorder.record({
    type: 'agent.started',
    data: {
      role: 'worker',
      taskId: task.id,
      title: task.title,
      model: options.model.spec,
      systemPrompt: WORKER_PROMPT,
      task: task.body,
      tools: tools.map((tool) => tool.name),
      ...(options.parentAgentId === undefined ? {} : { parentAgentId: options.parentAgentId }),
      ...(options.attempt === undefined ? {} : { attempt: options.attempt }),
    },
  });

  const outcome = await runAgentGuarded({
    model: options.model,
    tools,
    systemPrompt: WORKER_PROMPT,
    task: task.body,
    recorder,
    maxSteps: options.maxSteps,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });

  // Decide the workspace's fate before the handoff, so the handoff can say where kept work is.
  const leftover = await unmergedWork(repo, workspace);
  const removal = leftover === null ? await removeWorkspace(repo, workspace, { deleteBranch: true }) : null;
  const keptBecause = leftover?.reason ?? (removal !== null && !removal.removed ? removal.reason : null);
  let kept: KeptWorkspace | null = null;
  if (keptBecause !== null) {
    const locked = await keepWorkspace(repo, workspace, `colony kept this workspace: ${keptBecause}`);
    const unlocked = locked.locked ? '' : ` It could not be locked against \`git worktree prune\` (${locked.error ?? 'unknown error'}).`;
    kept = { path: workspace.path, reason: `${keptBecause}${unlocked}` };
  }
  recorder.record({ type: 'workspace.removed', data: { path: workspace.path, kept: kept !== null } });
  const handoff = finalHandoff(outcome, submitted, landed, kept, repo.trunk);
  recorder.record({ type: 'handoff.submitted', data: { taskId: task.id, handoff } });
  endAgent(recorder, outcome, handoff);
  return { agentId, handoff, keptWorkspace: kept?.path ?? null };
}

/**
 * The loop does not throw for model or tool failures; anything it does throw is a bug in colony
 * or a broken store. The worker still ends with a failure handoff and its workspace is judged
 * like any other, so the work is not lost with the error.
 */
async function runAgentGuarded(loop: AgentLoopOptions): Promise<AgentOutcome> {
  try {
    return await runAgent(loop);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { status: 'failed', steps: 0, reason: `colony itself failed while running the agent: ${reason}`, lastToolCall: null };
  }
}

interface KeptWorkspace {
  readonly path: string;
  readonly reason: string;
}

function finalHandoff(
  outcome: AgentOutcome,
  submitted: Handoff | null,
  landed: readonly string[],
  kept: KeptWorkspace | null,
  trunk: string,
): Handoff {
  const keptNote = kept === null ? [] : [`Its workspace was kept, not removed: ${kept.reason}`];
  if (outcome.status === 'ended' && submitted !== null) {
    const handoff: Handoff = submitted;
    return { ...handoff, commits: [...landed], notes: [...handoff.notes, ...keptNote] };
  }
  const reason = outcome.status === 'failed' ? outcome.reason : 'it ended without submitting a handoff';
  const lastToolCall = outcome.status === 'failed' ? outcome.lastToolCall : null;
  return syntheticFailureHandoff({
    summary: `The worker ended without a handoff: ${reason}.`,
    commits: landed,
    notes: [
      `It made ${outcome.steps} model call(s).`,
      lastToolCall === null ? 'It made no tool call.' : `Its last tool call was ${lastToolCall}.`,
      ...keptNote,
    ],
    concerns: landed.length > 0 ? [`Some of its work landed on ${trunk} before it ended; check it is complete.`] : [],
  });
}
