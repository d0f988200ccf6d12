import type { ToolCall } from '../model/messages.js';
import type { ToolResult } from '../tools/tool.js';
import type { RebuiltConversation } from './conversation-rebuild.js';
import { describeToolCall } from './conversation-rebuild.js';
import { answerCall, notRun, runToolCalls, type ToolTurn } from './tool-turn.js';

/** What an agent rebuilt after a restart goes on from (see `AgentLoopOptions.restore`). */
export interface AgentRestore {
  readonly conversation: RebuiltConversation;
  /** The task's attempt the agent goes on in, recorded in agent.restored. */
  readonly attempt: number;
  /** the answer to a call that was in flight when the harness stopped; see interruptedAnswer() for the default */
  readonly answerInterrupted: (call: ToolCall) => Promise<ToolResult>;
  /**
   * The last answered turn already ended the agent: one of its calls was an ending tool that
   * succeeded (see `endingCallSucceeded`). The loop then does what it did after such a turn:
   * calls of that turn not started yet are answered "not run", a planner with something due
   * waits for it and replans, and any other agent ends without a model call.
   */
  readonly lastTurnEnded?: boolean;
}

/**
 * The default answer to a call that was running when colony stopped. The call is never run
 * again: it may have done part or all of its work (a command that pushed, a file half
 * written), so the model is told to look before it repeats it.
 */
export function interruptedAnswer(_call: ToolCall): ToolResult {
  return {
    ok: false,
    error:
      'interrupted by a restart: colony stopped while this call was running, and the command was killed; check the workspace before repeating it',
  };
}

/**
 * True when the last answered turn already holds an ending tool call (a worker's
 * submit_handoff, a planner's finish) that ended ok. Every call before it has ended too, as
 * calls run in order, and any after it would only be answered "not run": the agent's turn
 * is over, so a worker is not run again.
 */
export function endingCallSucceeded(conversation: RebuiltConversation, endingTools: readonly string[]): boolean {
  return conversation.succeededCalls.some((call) => call.step === conversation.step && endingTools.includes(call.name));
}

/** How the restored turn ended, for the loop to go on from. */
export interface ResumedTurn {
  /** A call of the turn ended the agent. */
  readonly ended: boolean;
  /** The turn had no tool calls and nothing was told to the agent after it: it was about to be nudged or to wait. */
  readonly idle: boolean;
  readonly lastToolCall: string | null;
}

/**
 * Finishes the turn colony stopped in: records `agent.restored`, answers each interrupted call
 * without running it (a `tool.ended` each, made durable), then runs the calls that never
 * started, as the rest of that turn. `turn.messages` must be the rebuilt conversation's.
 */
export async function resumeTurn(restore: AgentRestore, turn: Omit<ToolTurn, 'step'>): Promise<ResumedTurn> {
  const { conversation } = restore;
  const { step, interrupted, notStarted } = conversation;
  turn.recorder.record({
    type: 'agent.restored',
    data: { attempt: restore.attempt, step, interrupted: interrupted.length, notStarted: notStarted.length },
  });
  let ended = restore.lastTurnEnded === true;
  let lastToolCall: string | null = null;
  for (const { step: callStep, call } of interrupted) {
    // A call after the handoff never ran in the first place; it gets the answer it would have.
    const result = ended ? notRun('the handoff was already submitted') : await restore.answerInterrupted(call);
    answerCall({ ...turn, step: callStep }, call, result, 0);
    lastToolCall = describeToolCall(call);
    if (result.ok && result.endsAgent === true) ended = true;
  }
  await turn.recorder.flush();
  // The calls not started are the end of the turn: a cut-off answer's last call is among them.
  const rest = await runToolCalls(notStarted, { ...turn, step, cutOff: conversation.cutOff }, ended);
  const last = conversation.messages.at(-1);
  return {
    ended: rest.ended,
    idle: !rest.ended && last?.role === 'assistant' && last.toolCalls.length === 0,
    lastToolCall: rest.lastToolCall ?? lastToolCall,
  };
}
