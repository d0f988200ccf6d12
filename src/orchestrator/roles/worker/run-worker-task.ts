import { recordLayerUse } from '../../../workspace/dependencies/dependency-layer-records.js';
import { basename } from 'node:path';
import { runAgent, type AgentLoopOptions, type AgentOutcome } from '../../../agent/agent-loop.js';
import { endingCallSucceeded } from '../../../agent/agent-restore.js';
import type { EventBody } from '../../../events/event-types.js';
import { syntheticFailureHandoff, type Handoff } from '../../../events/handoff.js';
import { newShortId } from '../../../events/ids.js';
import { createWorkerFileTools } from '../../../tools/worker-file-tools.js';
import { createMergeToMainTool } from '../../../tools/merge-to-main-tool.js';
import { createSubmitHandoffTool, handoffFromSubmitInput } from '../../../tools/submit-handoff-tool.js';
import { reopenWorkspace } from '../../../workspace/reopen-workspace.js';
import type { Workspace } from '../../../workspace/workspace.js';
import { unmergedWork } from '../../../workspace/workspace-status.js';
import { budgetStopHandoff, type AgentBudget } from '../../budget/agent-budget.js';
import type { Exhaustion } from '../../budget/budget-ledger.js';
import { commandMergeCheck } from './merge-check.js';
import { createAgentRecorder, endAgent } from '../../agent-recorder.js';
import { linkSharedDependencies } from '../../setup/shared-dependencies.js';
import { gitIgnoresLayer } from '../../../workspace/dependencies/dependency-layer-link.js';
import { followWorkspaceDependencies, type WorkspaceLayer } from './workspace-dependencies.js';
import type { RunProcess } from '../../../sandbox/process/types.js';
import { describeSalvage, reclaimWorkspace, type SalvagedWork } from '../../setup/workspace-reclaim.js';
import { answerInterruptedCalls } from '../../resume/interrupted-calls.js';
import { checkAcceptance } from './acceptance-checks.js';
import { FILES_NAMED, mergeRefusals } from './merge-refusals.js';
import { landedCommits, lastWorkspacePath, type PriorAgent } from '../../resume/prior-agents.js';
import { RUN_STOPPED, type RunContext } from '../../context/run-context.js';
import { createScratchpad, loopFreshness } from '../../context/agent-freshness.js';
import { createWriteScratchpadTool } from '../../../tools/write-scratchpad-tool.js';
import { detectProjectTestCommand, testCommandSentence } from '../../green/project-test-command.js';
import { mainFailingNotice } from './main-failing-notice.js';
import type { Message } from '../../../model/messages.js';
import { fillPlaceholders, listedNames, type PromptSet } from '../../prompts/prompt-set.js';
import { errorMessage } from '../../../errors/error-message.js';
import type { RunSettings } from '../../../events/run-settings.js';

export interface WorkerTask {
  readonly id: string;
  readonly title: string;
  /** The brief, in Markdown, exactly as the worker will read it. */
  readonly body: string;
  /** Commands that must pass on main at the worker's last landed commit; none when empty or absent. */
  readonly acceptance?: readonly string[];
  /** The files or folders its planner declared it expects to change; none when empty or absent. */
  readonly paths?: readonly string[];
  /** What it serves, outermost first: the run's goal, then each sub-planner's slice above it; unknown when absent. */
  readonly serves?: readonly string[];
}

/** What a worker needs of its run: a narrow view of the run's context. */
export type WorkerContext = Pick<
  RunContext,
  'runId' | 'repo' | 'events' | 'workerModel' | 'workspaces' | 'workspacesDir' | 'viewsDir' | 'dependencyLayers' | 'settleConflicts' | 'sharedLayers' | 'acceptanceTimeoutMs' | 'prompts' | 'commands' | 'onEvent' | 'disk' | 'mainHealth'
> & { readonly settings: Pick<RunSettings, 'workerMaxSteps' | 'mergeCheck' | 'freshness' | 'promptCache'> };

/** One claim of one task by a worker: the task, and what this claim of it brings. */
export interface WorkerClaim {
  readonly task: WorkerTask;
  readonly signal?: AbortSignal | undefined;
  /** Awaited after each landing of the worker's work on main, before the agent hears of it. */
  readonly onLanded?: ((commit: string) => Promise<void>) | undefined;
  /** The planner agent that published the task, when it came from a planner. */
  readonly parentAgentId?: string | null | undefined;
  /** Which claim of the task this is, from 1. */
  readonly attempt?: number | undefined;
  /** The run's budget as this worker sees it; no limit when absent. */
  readonly budget?: AgentBudget | undefined;
  /**
   * The agent an earlier session of the run had on this task (`colony resume`): the worker
   * goes on as that agent, in its workspace when it is still there, its conversation rebuilt.
   */
  readonly prior?: PriorAgent | null | undefined;
}

export interface WorkerResult {
  readonly agentId: string;
  readonly handoff: Handoff;
  /** The workspace, when it was kept because git could not read it or its work could not be salvaged. */
  readonly keptWorkspace: string | null;
  /** What was saved of work that did not land before the workspace was removed, or null. */
  readonly salvaged: SalvagedWork | null;
}

/**
 * Runs one worker on one task from start to end: a fresh workspace, the agent loop with the
 * worker's tools, exactly one handoff (the agent's own, or a synthetic failure when it ended
 * without one), and cleanup that never discards work that did not land: it is salvaged onto
 * the worker's branch before the workspace is removed.
 */
export async function runWorkerTask(context: WorkerContext, claim: WorkerClaim): Promise<WorkerResult> {
  const { repo, events, runId, viewsDir } = context;
  const { task } = claim;
  const acceptance = task.acceptance ?? [];
  const prior = claim.prior ?? null;
  const agentId = prior?.agentId ?? newShortId('worker');
  const recorder = createAgentRecorder(events, runId, agentId, context.onEvent, context.disk, claim.signal);
  const signal = claim.signal ?? new AbortController().signal;

  const placed = await placeWorkspace(context, claim.attempt ?? 1, agentId, prior, recorder.record);
  const { workspace } = placed;
  let notice = placed.notice;
  const tell = (text: string): void => {
    notice = notice === null ? text : `${notice}\n\n${text}`;
  };
  let submitted: Handoff | null = prior === null ? null : submittedBefore(prior);
  const landed: string[] = prior === null ? [] : landedCommits(prior);
  // main's failures before the worker's first landing: its acceptance verdict marks them as not its own.
  let redBefore = (await context.mainHealth?.red()) ?? null;
  const onLanded = async (commit: string): Promise<void> => {
    if (landed.length === 0) redBefore = (await context.mainHealth?.red()) ?? null;
    landed.push(commit);
    await claim.onLanded?.(commit);
  };
  const runProcess = await followingDependencies(context, placed, context.commands.forAgent(agentId, workspace.path), recorder.record, tell);
  const scratchpad = createScratchpad(recorder, prior);
  const freshnessSettings = context.settings.freshness;
  const freshness = loopFreshness(freshnessSettings, 'worker', context.workerModel.spec, context.prompts);
  const evidenceRequest = context.prompts.text('evidence-reminder');
  // Read from the workspace, which starts at main's latest: what the run has built so far counts.
  const systemPrompt = fillPlaceholders(context.prompts.text('worker'), { TEST_COMMAND: testCommandSentence(detectProjectTestCommand(workspace.path)) });
  const taskMessage = workerTaskMessage(context.prompts, task, context.settings.workerMaxSteps);
  const tools = [
    ...createWorkerFileTools(workspace.path, { runProcess }),
    createMergeToMainTool(repo, workspace, {
      record: recorder.record,
      ...(context.settings.mergeCheck === null ? {} : { check: commandMergeCheck(context.settings.mergeCheck, runProcess, claim.signal) }),
      onLanded,
      refuseOnce: mergeRefusals(repo, workspace, context.prompts, task.paths ?? [], prior),
      ...(context.settleConflicts === undefined ? {} : { settleConflicts: context.settleConflicts }),
      // The intent is in the log before main moves, so a restart can tell whether this merge
      // landed; a flush that fails ends the merge with main untouched.
      onIntent: async (intent) => {
        recorder.record({ type: 'merge.intended', data: intent });
        await events.flush();
      },
    }),
    createWriteScratchpadTool((content) => scratchpad.write(content)),
    createSubmitHandoffTool(
      (handoff) => {
        submitted = handoff;
      },
      {
        ...(freshnessSettings.evidenceFirst ? { evidenceFirst: evidenceRequest, askedBefore: askedForEvidence(prior, evidenceRequest) } : {}),
        unlanded: () => unlandedText(context, workspace),
      },
    ),
  ];
  if (prior === null) {
    recorder.record({
      type: 'agent.started',
      data: {
        role: 'worker',
        taskId: task.id,
        title: task.title,
        model: context.workerModel.spec,
        systemPrompt,
        task: taskMessage,
        tools: tools.map((tool) => tool.name),
        ...(claim.parentAgentId === undefined ? {} : { parentAgentId: claim.parentAgentId }),
        ...(claim.attempt === undefined ? {} : { attempt: claim.attempt }),
      },
    });
  }

  const budgetCheck = claim.budget ?? null;
  const stepsWarning = stepsWarningOnce(context.prompts.text('steps-warning'), context.settings.workerMaxSteps, prior !== null && told(prior, 'Steps: '));
  const { mainHealth } = context;
  /** How main stood before this model call (the loop asks for its notices after `beforeModelCall`). */
  let mainFailing = '';
  const loop: AgentLoopOptions = {
    model: context.workerModel,
    tools,
    systemPrompt,
    noToolCallNudge: context.prompts.text('worker-nudge'),
    task: taskMessage,
    recorder,
    maxSteps: context.settings.workerMaxSteps,
    signal,
    context: freshness.context,
    reminders: freshness.reminders,
    scratchpad: scratchpad.read,
    ...(context.settings.promptCache ? { cacheKey: agentId } : {}),
    beforeModelCall: async (step) => {
      // Read before the budget is asked, so a call it allows is the next thing recorded.
      if (mainHealth !== undefined) mainFailing = mainFailingNotice(context.prompts, await mainHealth.red());
      const spending = budgetCheck?.beforeModelCall() ?? null;
      if (typeof spending === 'object' && spending !== null) return spending;
      const told = [notice, stepsWarning.at(step), spending].filter((text) => text !== null).join('\n\n');
      notice = null;
      return told === '' ? null : told;
    },
    ...(mainHealth === undefined ? {} : { notices: () => [{ kind: 'main-failing', text: mainFailing }] }),
    ...(budgetCheck === null ? {} : { stopWaiting: () => budgetCheck.whileParked() }),
    ...(prior === null
      ? {}
      : {
          restore: {
            conversation: prior.conversation,
            attempt: claim.attempt ?? 1,
            answerInterrupted: answerInterruptedCalls({ prior, repo, record: recorder.record, onLanded, workspace }),
            // A worker that had submitted its handoff ends without another model call.
            lastTurnEnded: endingCallSucceeded(prior.conversation, ['submit_handoff']),
          },
        }),
  };
  const outcome = await runAgentGuarded(loop);

  // Stopped with the run, not finished: the workspace stays as it is for `colony resume`.
  const stoppedWithRun = (): WorkerResult => {
    const handoff = finalHandoff(outcome, null, landed, [`Its workspace ${workspace.path} was kept for the run to resume.`], repo.mainBranch, null);
    endAgent(recorder, outcome, handoff);
    return { agentId, handoff, keptWorkspace: workspace.path, salvaged: null };
  };
  if (submitted === null && signal.aborted && signal.reason === RUN_STOPPED) return stoppedWithRun();
  const budgetStop = claim.budget?.stoppedBy() ?? null;
  // Checked before the workspace is judged: a restart during the checks finds the worker as it
  // ended, workspace and all, and runs them again before its one handoff.
  const claimed = finalHandoff(outcome, submitted, landed, [], repo.mainBranch, budgetStop).status;
  const checked =
    acceptance.length === 0
      ? null
      : await checkAcceptance({
          repo,
          taskId: task.id,
          commands: acceptance,
          claimed,
          commit: landed.at(-1) ?? null,
          viewsDir,
          runnerFor: (dir) => context.commands.forAgent('system', dir),
          dependencyLayers: context.dependencyLayers ?? null,
          record: recorder.record,
          signal,
          redBefore,
          ...(context.acceptanceTimeoutMs === undefined ? {} : { commandTimeoutMs: context.acceptanceTimeoutMs }),
        });
  if (checked === RUN_STOPPED) return stoppedWithRun();
  // Decide the workspace's fate before the handoff, so the handoff can say where the work is.
  const reclaimed = await reclaimWorkspace(repo, context.workspaces, workspace, recorder.record);
  const notes = [
    ...placed.notes,
    ...(reclaimed.salvaged === null ? [] : [describeSalvage(reclaimed.salvaged, repo.mainBranch)]),
    ...(reclaimed.kept === null ? [] : [`Its workspace was kept, not removed: ${reclaimed.kept.reason}`]),
  ];
  const handoff = { ...finalHandoff(outcome, submitted, landed, notes, repo.mainBranch, budgetStop), ...(checked === null ? {} : { acceptance: checked }) };
  recorder.record({ type: 'handoff.submitted', data: { taskId: task.id, handoff } });
  endAgent(recorder, outcome, handoff);
  return { agentId, handoff, keptWorkspace: reclaimed.kept?.path ?? null, salvaged: reclaimed.salvaged };
}

/**
 * The worker's first message (the `worker-task` prompt): its brief as the planner wrote it, then
 * what colony knows around it: the goal it serves, the files it is expected to change, and its
 * step budget.
 */
export function workerTaskMessage(prompts: PromptSet, task: WorkerTask, maxSteps: number): string {
  const serves = task.serves ?? [];
  const paths = task.paths ?? [];
  return fillPlaceholders(prompts.text('worker-task'), {
    BRIEF: task.body,
    GOAL: serves.length === 0 ? 'not known to colony' : serves.join(' > '),
    PATHS: paths.length === 0 ? 'none declared' : paths.map((path) => `\`${path}\``).join(', '),
    STEPS: String(maxSteps),
  });
}

interface PlacedWorkspace {
  readonly workspace: Workspace;
  /** What the agent is told before its next model call, or null. */
  readonly notice: string | null;
  /** What its handoff notes about the workspace. */
  readonly notes: readonly string[];
  /** The dependency layer it has (stacked or linked), or null. */
  readonly layer: WorkspaceLayer | null;
  /** Made just now, from main's commit; false for one taken up again after a restart. */
  readonly fresh: boolean;
}

/**
 * The worker's workspace: a fresh one at main, or, for a worker taken up again after a
 * restart, the one it had, with its uncommitted work, when it is still there. When it is gone
 * the worker gets a fresh one and is told what that means.
 */
async function placeWorkspace(
  context: WorkerContext,
  attempt: number,
  agentId: string,
  prior: PriorAgent | null,
  record: (event: EventBody) => void,
): Promise<PlacedWorkspace> {
  const earlier = prior === null ? null : lastWorkspacePath(prior);
  if (earlier !== null) {
    const reopened = await reopenWorkspace(context.workspaces, context.workspacesDir, basename(earlier));
    if (reopened.ok) {
      record({ type: 'workspace.reopened', data: { path: reopened.workspace.path, branch: reopened.workspace.branch, clearedLocks: [...reopened.clearedLocks] } });
      return { workspace: reopened.workspace, notice: null, notes: [], layer: await reopenedLayer(context, reopened.workspace), fresh: false };
    }
    const fresh = await createWorkspace(context, `${agentId}-${attempt}`, record);
    const gone = `colony restarted, and your workspace could not be taken up again (${reopened.error}). You are now in a fresh workspace at ${context.repo.mainBranch}'s latest commit, ${fresh.workspace.path}: work you had not merged is not in it. Check what ${context.repo.mainBranch} already has before you go on.`;
    return { ...fresh, notice: gone, notes: [`After a restart its workspace could not be taken up again (${reopened.error}); it went on in a fresh one.`], fresh: true };
  }
  return { ...(await createWorkspace(context, agentId, record)), notice: null, notes: [], fresh: true };
}

/**
 * The layer a workspace taken up again after a restart was made with: its commit's, stacked
 * or linked as a new one would be. (One it got after changing its own package.json is found
 * again at its first command.)
 */
async function reopenedLayer(context: WorkerContext, workspace: Workspace): Promise<WorkspaceLayer | null> {
  const layerDir = (await context.dependencyLayers?.forCommit(workspace.baseCommit)) ?? null;
  if (layerDir === null || !(await gitIgnoresLayer(context.repo.root, layerDir))) return null;
  return { layerDir, stacked: workspace.method === 'overlay' };
}

async function createWorkspace(context: WorkerContext, id: string, record: (event: EventBody) => void): Promise<{ readonly workspace: Workspace; readonly layer: WorkspaceLayer | null }> {
  const { repo } = context;
  const started = performance.now();
  // The workspace gets the layer made from the package.json and lockfile of the commit it
  // starts from (a new one when work that landed changed them). An overlay workspace shows it as
  // one more lower layer, chosen once the provider has read main, at no cost; a worktree gets it
  // hard-linked in below. Either way only where git ignores what the layer holds
  // (node_modules, a .venv), or merging would commit it.
  const layers = context.dependencyLayers;
  let stacked: string | null = null;
  const workspace = await context.workspaces.create({
    id,
    parentDir: context.workspacesDir,
    ...(context.sharedLayers === undefined || context.sharedLayers.length === 0 ? {} : { sharedLayers: context.sharedLayers }),
    ...(layers === undefined || context.workspaces.method !== 'overlay'
      ? {}
      : {
          layersFor: async (baseCommit: string) => {
            const layer = await layers.forCommit(baseCommit);
            stacked = layer !== null && (await gitIgnoresLayer(repo.root, layer)) ? layer : null;
            return stacked === null ? [] : [stacked];
          },
        }),
  });
  record({
    type: 'workspace.created',
    data: {
      path: workspace.path,
      branch: workspace.branch,
      baseCommit: workspace.baseCommit,
      durationMs: Math.round(performance.now() - started),
      method: context.workspaces.method,
    },
  });
  if (stacked !== null) {
    await recordLayerUse(stacked, workspace.path);
    return { workspace, layer: { layerDir: stacked, stacked: true } };
  }
  const layer = (await layers?.forCommit(workspace.baseCommit)) ?? null;
  const linked = layer !== null && (await linkSharedDependencies(workspace.path, layer, record));
  return { workspace, layer: linked ? { layerDir: layer, stacked: false } : null };
}

/**
 * The agent's command runner, which first gives the workspace the dependencies of its own
 * package.json and lockfile when the agent changed them (`followWorkspaceDependencies`),
 * telling the agent what happened before its next model call.
 */
async function followingDependencies(context: WorkerContext, placed: PlacedWorkspace, run: RunProcess, record: (event: EventBody) => void, tell: (text: string) => void): Promise<RunProcess> {
  const layers = context.dependencyLayers;
  if (layers === undefined) return run;
  const dependencies = followWorkspaceDependencies({ workspace: placed.workspace, layers, provider: context.workspaces, layer: placed.layer, fresh: placed.fresh, record });
  await dependencies.start();
  return async (request) => {
    const told = await dependencies.beforeCommand();
    if (told !== null) tell(told);
    return run(request);
  };
}

/**
 * What a worker claiming `done` is told when its workspace holds work that is not on main (the
 * `unlanded-done` prompt, with what it holds), or null when it holds nothing or git cannot say.
 */
async function unlandedText(context: WorkerContext, workspace: Workspace): Promise<string | null> {
  const held = await unmergedWork(context.repo, workspace);
  if (held === null || held.status !== 'unlanded') return null;
  const parts = [
    ...(held.uncommittedFiles.length === 0 ? [] : [`uncommitted: ${listedNames(held.uncommittedFiles, FILES_NAMED)}`]),
    ...(held.unmergedCommits === 0 ? [] : [`${held.unmergedCommits} commit(s) not on ${context.repo.mainBranch}`]),
    ...(held.rebaseInProgress ? ['a merge stopped at a conflict'] : []),
  ];
  return fillPlaceholders(context.prompts.text('unlanded-done'), { MAIN: context.repo.mainBranch, HELD: parts.join('; ') });
}

/** A worker is told how many of its steps it has used once, at this share of them. */
const STEPS_WARNING_SHARE = 0.8;

/**
 * The steps notice (`steps-warning`): told once, at the first model call at or past 80 % of
 * the worker's steps, so it lands its work and hands off before it is stopped; not again for
 * a worker that was told before a restart.
 */
function stepsWarningOnce(text: string, maxSteps: number, toldBefore: boolean): { at(step: number): string | null } {
  let told = toldBefore;
  const from = Math.ceil(maxSteps * STEPS_WARNING_SHARE);
  return {
    at(step) {
      if (told || step < from || step >= maxSteps) return null;
      told = true;
      return fillPlaceholders(text, { USED: String(step - 1), MAX: String(maxSteps) });
    },
  };
}

/** Whether the agent was told a notice starting with `opening` before a restart. */
function told(prior: PriorAgent, opening: string): boolean {
  return toldIn(prior.conversation.messages, opening);
}

/** Whether `messages` tell a notice starting with `opening`: alone, or among the notices of one model call, a blank line apart. */
export function toldIn(messages: readonly Message[], opening: string): boolean {
  return messages.some((message) => message.role === 'user' && message.content.split('\n\n').some((part) => part.startsWith(opening)));
}

/** The handoff the worker had submitted before a restart, rebuilt from its recorded call, or null. */
function submittedBefore(prior: PriorAgent): Handoff | null {
  const call = prior.conversation.succeededCalls.findLast((candidate) => candidate.name === 'submit_handoff');
  return call === undefined ? null : handoffFromSubmitInput(call.input);
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
    const reason = errorMessage(error);
    return { status: 'failed', steps: 0, reason: `colony itself failed while running the agent: ${reason}`, lastToolCall: null };
  }
}

function finalHandoff(
  outcome: AgentOutcome,
  submitted: Handoff | null,
  landed: readonly string[],
  workspaceNotes: readonly string[],
  mainBranch: string,
  budgetStop: Exhaustion | null,
): Handoff {
  if (outcome.status === 'ended' && submitted !== null) {
    const handoff: Handoff = submitted;
    return { ...handoff, commits: [...landed], notes: [...handoff.notes, ...workspaceNotes] };
  }
  const reason = outcome.status === 'failed' ? outcome.reason : 'it ended without submitting a handoff';
  const lastToolCall = outcome.status === 'failed' ? outcome.lastToolCall : null;
  if (budgetStop !== null) {
    return budgetStopHandoff({
      exhaustion: budgetStop,
      doing: [
        `It made ${outcome.steps} model call(s) and was told its last one was its last.`,
        lastToolCall === null ? 'It made no tool call.' : `Its last tool call was ${lastToolCall}.`,
      ],
      commits: landed,
      notes: [...(landed.length > 0 ? [`Some of its work landed on ${mainBranch}; the rest of the task is not done.`] : []), ...workspaceNotes],
    });
  }
  return syntheticFailureHandoff({
    summary: `The worker ended without a handoff: ${reason.replace(/\.$/, '')}.`,
    commits: landed,
    notes: [
      `It made ${outcome.steps} model call(s).`,
      lastToolCall === null ? 'It made no tool call.' : `Its last tool call was ${lastToolCall}.`,
      ...workspaceNotes,
    ],
    concerns: landed.length > 0 ? [`Some of its work landed on ${mainBranch} before it ended; check it is complete.`] : [],
  });
}

/** Whether the worker's last life was already asked for evidence: its `submit_handoff` was answered with `request`. */
function askedForEvidence(prior: PriorAgent | null, request: string): boolean {
  return prior?.events.some((event) => event.type === 'tool.ended' && event.data.name === 'submit_handoff' && event.data.output === `error: ${request}`) ?? false;
}
