import type { ColonyEvent } from '../events/event-types.js';
import type { Message, ToolCall } from '../model/messages.js';
import { compactedMessages, shrinkOldToolOutputs } from './context-size.js';
import { cutOffOf, type CutOff } from './cut-off-call.js';

/** A call that had started when colony stopped, and never ended. */
export interface InterruptedCall {
  readonly step: number;
  readonly call: ToolCall;
}

/** One agent's conversation as its event log holds it, and where its last turn stood. */
export interface RebuiltConversation {
  /** system prompt, task, then every user/assistant/tool message in the order the model saw them */
  readonly messages: Message[];
  /** model calls answered so far (the step of the last model.responded; 0 when none) */
  readonly step: number;
  /** the last answered turn's calls that have tool.started but no tool.ended (at most one in practice) */
  readonly interrupted: readonly InterruptedCall[];
  /** the last answered turn's calls that never started (no tool.started), in order */
  readonly notStarted: readonly ToolCall[];
  /** set when the last answer was cut off at its output limit, with the limit its request asked for */
  readonly cutOff: CutOff | null;
  /** the last tool call as `name(input≤200 chars)`, for failure handoffs; null when none */
  readonly lastToolCall: string | null;
  /** tool calls that ended ok, by name, with their raw input, in order (the orchestrator derives e.g. a submitted handoff) */
  readonly succeededCalls: readonly { readonly name: string; readonly input: string; readonly output: string; readonly step: number }[];
  /** inbox seqs of every message.received that carried `inboxSeq` */
  readonly receivedInboxSeqs: ReadonlySet<number>;
  /** the standing notices shown with the last request, by kind (see `StandingNotice`); withdrawn ones are gone */
  readonly notices: ReadonlyMap<string, string>;
}

/** How a tool call is named in a failure handoff: its name and the start of its arguments. */
export function describeToolCall(call: Pick<ToolCall, 'name' | 'input'>): string {
  return `${call.name}(${call.input.slice(0, 200)})`;
}

/** The last answered turn: its calls, how many of them started and how many ended. */
interface OpenTurn {
  readonly step: number;
  readonly calls: readonly ToolCall[];
  started: number;
  ended: number;
}

/**
 * Rebuilds one agent's conversation from its events (all of one agent id, in seq order, any
 * number of attempts): exactly the messages its loop held after the last recorded event.
 * The loop records every message it adds (`agent.started` the system prompt and the task,
 * `message.received` and `agent.nudged` user messages (a standing notice is kept apart, in
 * `notices`, as the loop keeps it), `model.responded` the answers,
 * `tool.ended` the results as sent) and every cut it makes to fit the context window
 * (`context.shrunk`, `context.compacted`), so nothing else is needed. A model call without an answer
 * (colony stopped during it) adds nothing. Calls are matched to their `tool.started` and
 * `tool.ended` by position within their turn, as the loop runs them in order, so providers
 * that repeat call ids across turns rebuild right too.
 *
 * Throws when the events are not one agent's log as the loop writes it (no `agent.started`,
 * another agent's events, results out of order): that is a mistake in the caller.
 */
export function rebuildConversation(events: readonly ColonyEvent[]): RebuiltConversation {
  let opening: Message[] | null = null;
  const said: Message[] = [];
  let turn: OpenTurn | null = null;
  let lastToolCall: string | null = null;
  let askedOutputTokens: number | undefined;
  let cutOff: CutOff | null = null;
  const succeededCalls: { name: string; input: string; output: string; step: number }[] = [];
  const receivedInboxSeqs = new Set<number>();
  const notices = new Map<string, string>();
  const agentId = events[0]?.agentId;

  for (const event of events) {
    if (event.agentId !== agentId) {
      throw new Error(`rebuildConversation takes one agent's events: seq ${event.seq} is ${event.agentId}'s, not ${agentId ?? ''}'s.`);
    }
    switch (event.type) {
      case 'agent.started':
        // A later attempt may record its start again; the model saw the first one.
        opening ??= [
          { role: 'system', content: event.data.systemPrompt },
          { role: 'user', content: event.data.task },
        ];
        break;
      case 'message.received':
        said.push({ role: 'user', content: event.data.content });
        if (event.data.inboxSeq !== undefined) receivedInboxSeqs.add(event.data.inboxSeq);
        break;
      case 'agent.nudged':
        if (event.data.notice === undefined) said.push({ role: 'user', content: event.data.message });
        else if (event.data.message === '') notices.delete(event.data.notice);
        else notices.set(event.data.notice, event.data.message);
        break;
      case 'context.shrunk': {
        // The same cut the loop made, on the same messages, so the same outputs shrink.
        const all = [...(opening ?? []), ...said];
        shrinkOldToolOutputs(all, event.data.keptTurns, event.data.maxChars);
        said.splice(0, said.length, ...all.slice(opening?.length ?? 0));
        break;
      }
      case 'context.compacted': {
        const all = compactedMessages([...(opening ?? []), ...said], event.data.summary, event.data.kept);
        said.splice(0, said.length, ...all.slice(opening?.length ?? 0));
        break;
      }
      case 'model.requested':
        askedOutputTokens = event.data.maxOutputTokens;
        break;
      case 'model.responded':
        if (turn !== null && turn.ended < turn.calls.length) {
          throw inconsistent(event, `model call ${turn.step} still has ${turn.calls.length - turn.ended} call(s) without a result`);
        }
        // The request it answered is the last one recorded before it.
        cutOff = cutOffOf(event.data.finishReason, askedOutputTokens);
        said.push({ role: 'assistant', text: event.data.text, toolCalls: event.data.toolCalls });
        turn = { step: event.data.step, calls: event.data.toolCalls, started: 0, ended: 0 };
        break;
      case 'tool.started': {
        const call = expectedCall(event, turn, turn?.started ?? 0, event.data.callId);
        if (turn !== null) turn.started += 1;
        lastToolCall = describeToolCall(call);
        break;
      }
      case 'tool.ended': {
        if (turn === null || turn.ended >= turn.started) throw inconsistent(event, `call ${event.data.callId} ended without starting`);
        const call = expectedCall(event, turn, turn.ended, event.data.callId);
        turn.ended += 1;
        said.push({ role: 'tool', callId: call.id, toolName: event.data.name, content: event.data.output, isError: !event.data.ok });
        if (event.data.ok) succeededCalls.push({ name: call.name, input: call.input, output: event.data.output, step: event.data.step });
        break;
      }
      default:
        break;
    }
  }
  if (opening === null) {
    throw new Error(`rebuildConversation needs the agent's agent.started event, which holds its system prompt and task; none among ${events.length} event(s).`);
  }
  const last = turn;
  return {
    messages: [...opening, ...said],
    step: last?.step ?? 0,
    interrupted: last === null ? [] : last.calls.slice(last.ended, last.started).map((call) => ({ step: last.step, call })),
    notStarted: last === null ? [] : last.calls.slice(last.started),
    cutOff,
    lastToolCall,
    succeededCalls,
    receivedInboxSeqs,
    notices,
  };
}

function expectedCall(event: ColonyEvent, turn: OpenTurn | null, index: number, callId: string): ToolCall {
  const call = turn?.calls[index];
  if (call === undefined) throw inconsistent(event, `call ${callId} is not one of the last answer's calls`);
  if (call.id !== callId) throw inconsistent(event, `call ${callId} is out of order: call ${call.id} comes first`);
  return call;
}

function inconsistent(event: ColonyEvent, problem: string): Error {
  return new Error(`The log of agent ${event.agentId} is not one the agent loop writes: at seq ${event.seq} (${event.type}), ${problem}.`);
}
