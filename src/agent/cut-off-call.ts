import { readFileSync } from 'node:fs';
import type { ToolCall } from '../model/messages.js';
import type { AnyTool } from '../tools/tool.js';
import { dispatchToolCall, type DispatchResult } from './tool-dispatch.js';

const CUT_OFF_CALL = readFileSync(new URL('./cut-off-call.md', import.meta.url), 'utf8').trim();

/**
 * An answer the provider stopped at its output limit (finish reason `length`): the limit the
 * request asked for, or null when it asked for none and the provider's own applied.
 */
export interface CutOff {
  readonly outputTokens: number | null;
}

/** The cut-off of an answer that ended for `finishReason` after a request for `outputTokens`; null when it ended on its own. */
export function cutOffOf(finishReason: string, outputTokens: number | undefined): CutOff | null {
  return finishReason === 'length' ? { outputTokens: outputTokens ?? null } : null;
}

/**
 * Dispatches the last call of a cut-off answer. The provider stopped in the middle of it when
 * its arguments are empty, not JSON, or not what its tool takes (a JSON object is only whole
 * once closed, and a call cut right after its name comes with none): that call is not run and
 * is answered with what happened and to do less in one answer (`cut-off-call.md`). A whole
 * call runs as any other, and a call to an unknown tool gets the usual answer.
 */
export async function dispatchCutOffCall(
  call: ToolCall,
  toolsByName: ReadonlyMap<string, AnyTool>,
  signal: AbortSignal,
  cutOff: CutOff,
): Promise<DispatchResult> {
  const cut: DispatchResult = { ran: false, rejection: 'cut-off', result: { ok: false, error: cutOffMessage(cutOff) } };
  if (call.input.trim() === '') return cut;
  const dispatch = await dispatchToolCall(call, toolsByName, signal);
  return !dispatch.ran && dispatch.rejection !== 'unknown-tool' ? cut : dispatch;
}

/** What the model is told of a call its answer was cut off in. */
export function cutOffMessage(cutOff: CutOff): string {
  const limit = cutOff.outputTokens === null ? "the provider's output limit" : `its output limit of ${cutOff.outputTokens.toLocaleString('en-US')} tokens`;
  return CUT_OFF_CALL.replace('{{LIMIT}}', () => limit);
}
