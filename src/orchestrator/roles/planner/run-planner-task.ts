import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runAgent, type AgentInbox, type AgentOutcome, type InboxDelivery } from '../../../agent/agent-loop.js';
import { endingCallSucceeded } from '../../../agent/agent-restore.js';
import { type AgentRecorder } from '../../../agent/types.js';
import type { AgentRole } from '../../../events/event-fields.js';
import { syntheticFailureHandoff, type Handoff } from '../../../events/handoff.js';
import { newShortId } from '../../../events/ids.js';
import { isDiskFull } from '../../../store/sqlite/disk-full.js';
import type { InboxMessage, Lease, TaskRecord } from '../../../store/tasks/task-store.js';
import { createPlannerRoleTools, finishReportFromInput, type FinishReport } from '../../../tools/planner-tools.js';
import { createListDirTool } from '../../../tools/list-dir-tool.js';
import { createReadFileTool } from '../../../tools/read-file-tool.js';
import { createRunCommandTool } from '../../../tools/run-command-tool.js';
import { createSearchTool } from '../../../tools/search-tool.js';
import { followSharedDependencies } from '../../setup/shared-dependencies.js';
import { createMainView, type MainView } from '../../../workspace/checkout/main-view.js';
import { budgetStopHandoff, createAgentBudget } from '../../budget/agent-budget.js';
import { createAgentRecorder, endAgent, flushInBackground } from '../../agent-recorder.js';
import type { Exhaustion } from '../../budget/budget-ledger.js';
import { handoffMessage, personMessage } from './handoff-message.js';
import { createFilesInFlightNotice } from './files-in-flight-notice.js';
import { plannerBrief, withBriefFile, type PlannerBrief } from './large-brief.js';
import { createPlannerBoard, publishesPerAnswer, handoffFromFinish, type BoardContext } from './planner-board.js';
import type { RunSettings } from '../../../events/run-settings.js';
import { RUN_STOPPED, type RunContext } from '../../context/run-context.js';
import type { TaskExecution } from '../../context/task-execution.js';
import { answerInterruptedCalls } from '../../resume/interrupted-calls.js';
import { priorOf, type PriorAgent } from '../../resume/prior-agents.js';
import { createScratchpad, loopFreshness } from '../../context/agent-freshness.js';
import { detectProjectTestCommand, testCommandSentence } from '../../green/project-test-command.js';
import { fillPlaceholders, type PromptName } from '../../prompts/prompt-set.js';
import { errorMessage } from '../../../errors/error-message.js';

const ROLE_PROMPTS: Record<Exclude<AgentRole, 'worker'>, PromptName> = {
  'root-planner': 'root-planner-role',
  'sub-planner': 'sub-planner-role',
};

/** How often a waiting planner looks at the store even without a wake-up (another process may have written). */
const INBOX_POLL_MS = 1_000;

/** What a planner needs of its run: a narrow view of the run's context. */
export type PlannerContext = BoardContext &
  Pick<RunContext, 'events' | 'repo' | 'plannerModel' | 'prompts' | 'commands' | 'viewsDir' | 'dependencyLayers' | 'budget' | 'onEvent' | 'disk' | 'steering' | 'priorAgents'> & {
    readonly settings: Pick<RunSettings, 'plannerMaxSteps' | 'freshness' | 'promptCache' | 'workers'>;
  };

/**
 * Runs one planner on its task: a view of main, the read-only repository tools and the role
 * tools, the agent loop with its inbox, and exactly one handoff: its `finish`, or a synthetic
 * failure when it ended without one.
 */
export async function runPlannerTask(
  context: PlannerContext,
  task: TaskRecord,
  signal: AbortSignal,
  lease: () => Lease,
  /** After a restart the task goes back to the planner that had it, its conversation rebuilt; read here when not given. */
  given?: PriorAgent | null,
): Promise<TaskExecution> {
  const prior = given === undefined ? await priorOf(context, task) : given;
  const agentId = prior?.agentId ?? newShortId('planner');
  const role: Exclude<AgentRole, 'worker'> = task.parentTaskId === null ? 'root-planner' : 'sub-planner';
  const recorder = createAgentRecorder(context.events, context.runId, agentId, context.onEvent, context.disk, signal);
  const board = createPlannerBoard(context, task, agentId, recorder, {
    lease,
    finished: prior === null ? null : finishedBefore(prior),
    publishesPerAnswer: publishesPerAnswer(context.settings.workers),
  });
  // The board records each write; the scratchpad keeps the latest for every request.
  const scratchpad = createScratchpad(recorder, prior, false);
  const freshness = loopFreshness(context.settings.freshness, 'planner', context.plannerModel.spec, context.prompts);
  const filesNotice = createFilesInFlightNotice(context.workInFlight, task.id, context.prompts);
  const budget = context.budget === undefined ? null : createAgentBudget(context.budget, task.id, 'planner', context.prompts);

  let view: MainView;
  try {
    view = await createMainView(context.repo, { id: agentId, parentDir: context.viewsDir });
  } catch (error) {
    const reason = `colony could not make the planner's view of main: ${errorMessage(error)}`;
    return { agentId, handoff: syntheticPlannerHandoff({ status: 'failed', steps: 0, reason, lastToolCall: null }, role) };
  }
  // The planner checks main with the environment the workers have, the layer of the commit it sees.
  let layer: string | null = null;
  const followLayer = async () => {
    layer = await followSharedDependencies(view.path, layer, (await context.dependencyLayers?.forCommit(view.commit())) ?? null, recorder.record);
  };
  await followLayer();
  // The test command is read from main as the planner starts, so a sub-planner sees what the run has built since.
  const systemPrompt = fillPlaceholders(context.prompts.text('planner'), {
    ROLE: context.prompts.text(ROLE_PROMPTS[role]),
    TEST_COMMAND: testCommandSentence(detectProjectTestCommand(view.path)),
    PUBLISH_LIMIT: String(publishesPerAnswer(context.settings.workers)),
  });
  // A brief too large for the window is read in parts from a file beside the view (large-brief.ts).
  const briefDir = join(context.viewsDir, `${agentId}.brief`);
  let brief: PlannerBrief;
  try {
    brief = await plannerBrief(task.body, { windowTokens: freshness.context.windowTokens, dir: briefDir, what: role === 'root-planner' ? 'goal' : 'brief' });
  } catch (error) {
    await view.remove();
    const reason = `colony could not write the planner's brief to ${briefDir}: ${errorMessage(error)}`;
    return { agentId, handoff: syntheticPlannerHandoff({ status: 'failed', steps: 0, reason, lastToolCall: null }, role) };
  }
  const viewTools = { readFile: createReadFileTool(view.path), search: createSearchTool(view.path) };
  const [readFile, search] =
    brief.file === null
      ? [viewTools.readFile, viewTools.search]
      : withBriefFile(viewTools, { readFile: createReadFileTool(brief.file.dir), search: createSearchTool(brief.file.dir), name: brief.file.name });
  const tools = [
    readFile,
    createListDirTool(view.path),
    search,
    createRunCommandTool(view.path, { runProcess: context.commands.forAgent(agentId, view.path) }),
    ...createPlannerRoleTools({
      ...board,
      writeScratchpad: (content) => {
        board.writeScratchpad(content);
        scratchpad.write(content);
      },
    }),
  ];
  if (prior === null) recorder.record({
    type: 'agent.started',
    data: {
      role,
      taskId: task.id,
      title: task.title,
      model: context.plannerModel.spec,
      systemPrompt,
      task: brief.message,
      tools: tools.map((tool) => tool.name),
      parentAgentId: task.createdBy,
      attempt: task.attempt,
    },
  });

  const missed = prior === null ? [] : await missedMessages(context, task, prior);
  /** Why the view could not follow main before this model call; null when it did. */
  let viewProblem: string | null = null;
  /** The files in flight as they stood before this model call (the loop asks for its notices after `beforeModelCall`). */
  let filesInFlight: string | null = null;
  let outcome: AgentOutcome;
  try {
    outcome = await runAgent({
      model: context.plannerModel,
      tools,
      systemPrompt,
      task: brief.message,
      recorder,
      maxSteps: context.settings.plannerMaxSteps,
      signal,
      inbox: plannerInbox(context, task, lease, missed),
      noToolCallNudge: context.prompts.text('planner-nudge'),
      context: freshness.context,
      reminders: freshness.reminders,
      scratchpad: scratchpad.read,
      ...(context.settings.promptCache ? { cacheKey: agentId } : {}),
      beforeModelCall: async () => {
        // While colony cannot write (a full disk), a planner's messages cannot be taken either:
        // it waits for the disk rather than calling its model over and over without them.
        if (context.disk?.isFull() === true) await context.disk.flush(signal);
        board.startAnswer();
        viewProblem = await view.followMain();
        if (viewProblem === null) await followLayer();
        filesInFlight = await filesNotice.current();
        // Asked last, after every wait: a call the budget allows is the next thing recorded, so
        // a limit used up in between makes this call the last one rather than one more after it.
        return budget?.beforeModelCall() ?? null;
      },
      notices: () => [
        { kind: 'main-view', text: viewProblem === null ? '' : `colony could not bring your view of main up to date, so what you read may be behind main: ${viewProblem}` },
        { kind: 'files-in-flight', text: filesInFlight ?? '' },
      ],
      ...(budget === null ? {} : { stopWaiting: () => budget.whileParked() }),
      ...(prior === null
        ? {}
        : {
            restore: {
              conversation: prior.conversation,
              attempt: task.attempt,
              answerInterrupted: answerInterruptedCalls({ prior, repo: context.repo, record: recorder.record }),
              // A planner that had finished goes on as after any finish: it waits for what is due, or ends.
              lastTurnEnded: endingCallSucceeded(prior.conversation, ['finish']),
            },
          }),
    });
  } catch (error) {
    const reason = `colony itself failed while running the planner: ${errorMessage(error)}`;
    outcome = { status: 'failed', steps: 0, reason, lastToolCall: null };
  } finally {
    await view.remove();
    await rm(briefDir, { recursive: true, force: true }).catch(() => undefined);
  }

  // A planner that finished and published nothing since keeps its finish as its handoff, even
  // when it then ran out of steps over late messages; only a stop or a planner that never
  // finished gets a synthetic one.
  const report = board.finished();
  const budgetStop = budget?.stoppedBy() ?? null;
  // Stopped by the budget, it still answers for every task it published: their agents get
  // their own last calls, and the tasks that never started are closed by the runner.
  if (budgetStop !== null) await waitForChildren(context, task, outcome.steps, recorder, signal);
  const handoff =
    report !== null && !signal.aborted
      ? handoffFromFinish(report, outcome)
      : budgetStop !== null && !signal.aborted
        ? await budgetStoppedPlannerHandoff(context, task, outcome, budgetStop)
        : syntheticPlannerHandoff(outcome, role);
  // Recorded like a worker's, so a restart that cuts off its delivery delivers it as it was.
  // A planner stopped with the run hands nothing off: it is taken up again on resume.
  if (!(signal.aborted && signal.reason === RUN_STOPPED)) recorder.record({ type: 'handoff.submitted', data: { taskId: task.id, handoff } });
  endAgent(recorder, outcome, handoff);
  return { agentId, handoff };
}

/**
 * The planner's inbox as the loop sees it, rendering each stored message as the text the
 * planner reads. `missed` (messages taken before a restart but never recorded in its
 * conversation) come first, once. Takes are fenced by the planner's lease: an older
 * attempt of the planner takes nothing.
 */
function plannerInbox(context: PlannerContext, task: TaskRecord, lease: () => Lease, missed: readonly InboxMessage[]): AgentInbox {
  const render = async (message: InboxMessage): Promise<string> => {
    if (message.handoff !== null && message.fromTaskId !== null) {
      const child = await context.tasks.getTask(message.fromTaskId);
      return handoffMessage(message.fromTaskId, child?.title ?? message.fromTaskId, message.handoff);
    }
    // colony's own notices (a fix-up from the green loop) read as colony wrote them.
    if (message.sender === 'colony') return message.text ?? '';
    return personMessage(message.text ?? '');
  };
  let redeliver = [...missed];
  return {
    take: async () => {
      // A message a person left from another process is recorded as sent before it is received.
      await context.steering?.recordSteering();
      const taken = [...redeliver, ...(await takeStored(context, task, lease()))];
      redeliver = [];
      const deliveries: InboxDelivery[] = [];
      for (const message of taken) deliveries.push({ fromTaskId: message.fromTaskId, content: await render(message), inboxSeq: message.seq });
      return deliveries;
    },
    pending: async () => {
      // Children first: one that hands off between the two reads then shows as unread, not as nothing due.
      const openChildren = await context.tasks.movableChildren(task.id);
      return { unread: (await context.tasks.unreadCount(task.id)) + redeliver.length, openChildren };
    },
    wait: (signal) => context.wakeups.wait(task.id, signal, INBOX_POLL_MS),
  };
}

/** The planner's unread messages, taken; none while the disk is full (they wait, unread, for the next take). */
async function takeStored(context: PlannerContext, task: TaskRecord, lease: Lease): Promise<InboxMessage[]> {
  try {
    return await context.tasks.takeInbox(task.id, lease);
  } catch (error) {
    if (isDiskFull(error)) return [];
    throw error;
  }
}

/** Messages the store says the planner took that its recorded conversation never received: a crash fell between the two. */
async function missedMessages(context: PlannerContext, task: TaskRecord, prior: PriorAgent): Promise<InboxMessage[]> {
  return (await context.tasks.takenInbox(task.id)).filter((message) => !prior.conversation.receivedInboxSeqs.has(message.seq));
}

/** The planner's finish before a restart, if it had finished and published nothing since. */
function finishedBefore(prior: PriorAgent): FinishReport | null {
  const calls = prior.conversation.succeededCalls;
  const lastFinish = calls.findLastIndex((call) => call.name === 'finish');
  if (lastFinish === -1) return null;
  if (calls.slice(lastFinish + 1).some((call) => call.name === 'create_task' || call.name === 'delegate')) return null;
  return finishReportFromInput(calls[lastFinish]?.input ?? '');
}

function syntheticPlannerHandoff(outcome: AgentOutcome, role: AgentRole): Handoff {
  const reason = outcome.status === 'failed' ? outcome.reason : 'it ended without calling finish';
  const lastToolCall = outcome.status === 'failed' ? outcome.lastToolCall : null;
  return syntheticFailureHandoff({
    summary: `The ${role} ended without finishing its scope: ${reason.replace(/\.$/, '')}.`,
    notes: [`It made ${outcome.steps} model call(s).`, lastToolCall === null ? 'It made no tool call.' : `Its last tool call was ${lastToolCall}.`],
    concerns: ['Tasks it published may still be open or may have landed work; check main before planning its scope again.'],
  });
}

async function waitForChildren(context: PlannerContext, task: TaskRecord, step: number, recorder: AgentRecorder, signal: AbortSignal): Promise<void> {
  let open = await context.tasks.movableChildren(task.id);
  if (open === 0) return;
  recorder.record({ type: 'agent.waiting', data: { step, openChildren: open } });
  flushInBackground(recorder);
  while (open > 0 && !signal.aborted) {
    await context.wakeups.wait(task.id, signal, INBOX_POLL_MS);
    open = await context.tasks.movableChildren(task.id);
  }
}

/** A planner the budget stopped before it finished: what it had published and how each task ended. */
async function budgetStoppedPlannerHandoff(context: PlannerContext, task: TaskRecord, outcome: AgentOutcome, exhaustion: Exhaustion): Promise<Handoff> {
  const children = (await context.tasks.listTasks(context.runId)).filter((child) => child.parentTaskId === task.id);
  const lastToolCall = outcome.status === 'failed' ? outcome.lastToolCall : null;
  return budgetStopHandoff({
    exhaustion,
    doing: [
      `It made ${outcome.steps} model call(s) and did not call finish in its last one.`,
      lastToolCall === null ? 'It made no tool call.' : `Its last tool call was ${lastToolCall}.`,
      `It published ${children.length} task(s).`,
    ],
    notes: children.map((child) => `task ${child.id} (${child.title}): ${child.handoff === null ? child.status : `${child.handoff.status}: ${child.handoff.summary}`}`),
  });
}
