import type { Message, ToolCall } from '../model/messages.js';
import type { AnyTool, ToolResult } from '../tools/tool.js';
import type { AgentRecorder } from './types.js';
import { describeToolCall } from './conversation-rebuild.js';
import { dispatchCutOffCall, type CutOff } from './cut-off-call.js';
import { dispatchToolCall } from './tool-dispatch.js';

/** The largest tool output that goes back into the conversation; tools cap their own far lower. */
const MAX_TOOL_OUTPUT_CHARS = 100_000;

export interface TurnResult {
  /** A call ended the agent (its handoff, or a planner's finish). */
  readonly ended: boolean;
  readonly allRejected: boolean;
  readonly lastToolCall: string | null;
}

export interface ToolTurn {
  readonly step: number;
  readonly toolsByName: ReadonlyMap<string, AnyTool>;
  readonly signal: AbortSignal;
  readonly recorder: AgentRecorder;
  readonly messages: Message[];
  /** Set when the answer the calls came in was cut off at its output limit: its last call may be cut short. */
  readonly cutOff?: CutOff | null;
}

/**
 * Runs a turn's calls in order: `tool.started` made durable, the call dispatched, `tool.ended`
 * and the result appended to the conversation. Once a call has ended the agent (or `ended`
 * says one already did), the rest are answered "not run", as they are once the run is cancelled.
 * In an answer cut off at its output limit, the last call is the one the cut may have fallen
 * in (see `dispatchCutOffCall`).
 */
export async function runToolCalls(calls: readonly ToolCall[], turn: ToolTurn, ended = false): Promise<TurnResult> {
  const { step, toolsByName, signal, recorder } = turn;
  const cutOff = turn.cutOff ?? null;
  let rejected = 0;
  let lastToolCall: string | null = null;
  for (const [index, call] of calls.entries()) {
    recorder.record({ type: 'tool.started', data: { step, callId: call.id, name: call.name, input: call.input } });
    // The model's response and this call's start are durable before the call has any effect,
    // so a restart knows what was in flight; one sync covers both.
    await recorder.flush();
    const started = performance.now();
    const skipped = ended ? 'the handoff was already submitted' : signal.aborted ? 'the run was cancelled' : null;
    const dispatch =
      skipped !== null
        ? { ran: false as const, result: notRun(skipped) }
        : cutOff !== null && index === calls.length - 1
          ? await dispatchCutOffCall(call, toolsByName, signal, cutOff)
          : await dispatchToolCall(call, toolsByName, signal);
    if (!dispatch.ran) rejected += 1;
    answerCall(turn, call, dispatch.result, Math.round((performance.now() - started) * 1000) / 1000);
    lastToolCall = describeToolCall(call);
    if (dispatch.result.ok && dispatch.result.endsAgent === true) ended = true;
  }
  return { ended, allRejected: rejected === calls.length, lastToolCall };
}

/** The answer to a call the loop does not run: after the handoff, or once the run is cancelled. */
export function notRun(why: string): ToolResult & { ok: false } {
  return { ok: false, error: `not run: ${why}` };
}

/** Records a call's `tool.ended` and appends its result to the conversation, exactly as recorded. */
export function answerCall(turn: ToolTurn, call: ToolCall, result: ToolResult, durationMs: number): void {
  // The error flag does not survive every provider's wire format, so the text says it too.
  const content = capOutput(result.ok ? result.output : `error: ${result.error}`);
  const cpu = result.ok && result.cpuMs !== undefined ? { cpuMs: result.cpuMs } : {};
  turn.recorder.record({
    type: 'tool.ended',
    data: { step: turn.step, callId: call.id, name: call.name, ok: result.ok, output: content, durationMs, ...cpu },
  });
  turn.messages.push({ role: 'tool', callId: call.id, toolName: call.name, content, isError: !result.ok });
}

function capOutput(text: string): string {
  if (text.length <= MAX_TOOL_OUTPUT_CHARS) return text;
  const half = MAX_TOOL_OUTPUT_CHARS / 2;
  const omitted = text.length - MAX_TOOL_OUTPUT_CHARS;
  return `${text.slice(0, half)}\n[... ${omitted} characters omitted ...]\n${text.slice(-half)}`;
}
