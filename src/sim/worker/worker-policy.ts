import type { Message } from '../../model/messages.js';
import { malformCall, malformedKindFor } from '../malformed-call.js';
import type { SimAnswer } from '../sim-answer.js';
import { simAnswer } from '../sim-answer.js';
import { seededRoll } from '../seeded-roll.js';
import type { SimOptions } from '../sim-options.js';
import { ABANDON_TEXT, readConversation } from './worker-conversation.js';
import { planWorkerTurn } from './worker-next-step.js';
import { encodeWorkerCall } from './worker-tool-calls.js';

/**
 * The sim worker's answer to a conversation. It reads nothing but `messages`, keeps no state,
 * and rolls every fault from a hash of the seed and the conversation, so the same
 * conversation and options always give the same answer.
 *
 * Faults: with chance `options.crash` per turn after the first it abandons the task and from
 * then on answers with text only; with chance `options.malformed` per turn it sends one
 * malformed tool call instead of the intended calls, and re-issues the real step next turn.
 */
export function simWorkerTurn(messages: readonly Message[], toolNames: readonly string[], options: SimOptions): SimAnswer {
  const conversation = readConversation(messages);
  const { turn, taskText } = conversation;
  const crashes = conversation.abandoned || (turn > 0 && seededRoll(options.seed, taskText, turn, 'crash') < options.crash);
  let text = ABANDON_TEXT;
  let calls: { name: string; input: string }[] = [];
  if (!crashes) {
    const planned = planWorkerTurn(conversation, toolNames, options);
    const retrying = conversation.facts?.lastCallRejected ?? false;
    text = retrying ? `My last tool call was malformed; making it again properly. ${planned.text}` : planned.text;
    calls = planned.calls.map(encodeWorkerCall);
    const intended = planned.calls[0];
    if (intended !== undefined && seededRoll(options.seed, taskText, turn, 'malformed') < options.malformed) {
      const kind = malformedKindFor(seededRoll(options.seed, taskText, turn, 'malformed-kind'));
      calls = [malformCall(intended, kind, toolNames)];
    }
  }
  return simAnswer(messages, turn, text, calls, options);
}
