import type { ColonyEvent } from '../../events/event-types.js';
import type { AgentRole } from '../../events/event-fields.js';
import type { Handoff } from '../../events/handoff.js';

/** One thing in an agent's transcript, in the order it happened. */
export type TranscriptEntry =
  | { readonly kind: 'task'; readonly ts: number; readonly text: string }
  | { readonly kind: 'model'; readonly ts: number; readonly step: number; readonly text: string; readonly toolCalls: number; readonly tokens: number }
  | { readonly kind: 'tool'; readonly ts: number; readonly step: number; readonly name: string; readonly input: string; readonly output: string | null; readonly ok: boolean | null; readonly durationMs: number | null }
  | { readonly kind: 'message'; readonly ts: number; readonly text: string }
  | { readonly kind: 'note'; readonly ts: number; readonly text: string };

/** One agent's life as the log recorded it: what it was told, said and did, and what it left. */
export interface AgentTranscript {
  readonly agentId: string;
  readonly role: AgentRole | null;
  readonly title: string;
  readonly entries: readonly TranscriptEntry[];
  /** Its scratchpad as last written; null before it wrote one. */
  readonly scratchpad: string | null;
  readonly handoffs: readonly Handoff[];
  /** Its workspace, where it had one. */
  readonly workspace: string | null;
  /** The commits it landed on main, in order. */
  readonly landed: readonly string[];
}

/**
 * One agent's transcript built up as its events arrive, so a page left open on a live agent
 * reads only what the agent logged since, not its whole history again.
 */
export interface AgentTranscriptFold {
  /** Events must come in seq order; events of other agents are passed over. */
  add(event: ColonyEvent): void;
  /** The transcript so far: the same object until an event changes it, fresh arrays after. */
  snapshot(): AgentTranscript;
}

export function createAgentTranscriptFold(agentId: string): AgentTranscriptFold {
  const entries: TranscriptEntry[] = [];
  const tools = new Map<string, number>();
  const handoffs: Handoff[] = [];
  const landed: string[] = [];
  let role: AgentRole | null = null;
  let title = '';
  let scratchpad: string | null = null;
  let workspace: string | null = null;
  let last: AgentTranscript | null = null;

  function add(event: ColonyEvent): void {
    if (event.agentId !== agentId) return;
    switch (event.type) {
      case 'agent.started':
        role = event.data.role;
        title = event.data.title;
        entries.push({ kind: 'task', ts: event.ts, text: event.data.task });
        break;
      case 'model.responded':
        entries.push({
          kind: 'model',
          ts: event.ts,
          step: event.data.step,
          text: event.data.text,
          toolCalls: event.data.toolCalls.length,
          tokens: event.data.usage.inputTokens + event.data.usage.outputTokens,
        });
        break;
      case 'tool.started':
        tools.set(event.data.callId, entries.length);
        entries.push({ kind: 'tool', ts: event.ts, step: event.data.step, name: event.data.name, input: event.data.input, output: null, ok: null, durationMs: null });
        break;
      case 'tool.ended': {
        const index = tools.get(event.data.callId);
        const started = index === undefined ? undefined : entries[index];
        const ended = { output: event.data.output, ok: event.data.ok, durationMs: event.data.durationMs };
        if (index !== undefined && started?.kind === 'tool') entries[index] = { ...started, ...ended };
        else entries.push({ kind: 'tool', ts: event.ts, step: event.data.step, name: event.data.name, input: '', ...ended });
        break;
      }
      case 'message.received':
        entries.push({ kind: 'message', ts: event.ts, text: event.data.content });
        break;
      case 'agent.nudged': {
        const { notice, message } = event.data;
        const text = notice === undefined ? `colony: ${message}` : message === '' ? `colony withdrew its ${notice} notice` : `colony's ${notice} notice: ${message}`;
        entries.push({ kind: 'note', ts: event.ts, text });
        break;
      }
      case 'context.compacted':
        entries.push({ kind: 'note', ts: event.ts, text: `conversation summarised: ${event.data.beforeTokens} to ${event.data.afterTokens} tokens` });
        break;
      case 'scratchpad.written':
        scratchpad = event.data.content;
        break;
      case 'workspace.created':
      case 'workspace.reopened':
        workspace = event.data.path;
        break;
      case 'merge.landed':
        landed.push(event.data.commit);
        entries.push({ kind: 'note', ts: event.ts, text: `landed ${event.data.commit.slice(0, 12)} (${event.data.files.length} file(s))` });
        break;
      case 'merge.conflicted':
        entries.push({ kind: 'note', ts: event.ts, text: `merge conflict in ${event.data.files.join(', ')}` });
        break;
      case 'handoff.submitted':
        handoffs.push(event.data.handoff);
        entries.push({ kind: 'note', ts: event.ts, text: `handed off ${event.data.handoff.status}: ${event.data.handoff.summary}` });
        break;
      case 'planner.finished':
        entries.push({ kind: 'note', ts: event.ts, text: `finished ${event.data.status}: ${event.data.summary}` });
        break;
      case 'agent.ended':
        entries.push({ kind: 'note', ts: event.ts, text: `ended ${event.data.status}: ${event.data.reason}` });
        break;
      case 'agent.failed':
        entries.push({ kind: 'note', ts: event.ts, text: `failed: ${event.data.reason}` });
        break;
      default:
        return;
    }
    last = null;
  }

  return {
    add,
    snapshot() {
      last ??= { agentId, role, title, entries: [...entries], scratchpad, handoffs: [...handoffs], workspace, landed: [...landed] };
      return last;
    },
  };
}

/** Folds one agent's events (in seq order) into its transcript; events of other agents are passed over. */
export function buildAgentTranscript(agentId: string, events: Iterable<ColonyEvent>): AgentTranscript {
  const fold = createAgentTranscriptFold(agentId);
  for (const event of events) fold.add(event);
  return fold.snapshot();
}
