import type { ColonyEvent } from '../../events/event-types.js';

/** What an agent is doing this moment: waiting on its model, running one tool call, or colony checking its work. */
export interface AgentActivity {
  readonly kind: 'model' | 'tool' | 'acceptance';
  /** The tool's name, the model the call went to, or `acceptance` while its task's acceptance commands run. */
  readonly name: string;
  /** What the call is about, on one short line: the command, the path, the task's title. */
  readonly detail: string;
  /** When it began, in milliseconds since the epoch. */
  readonly since: number;
}

const DETAIL_CHARS = 60;
/** The argument a person recognises a call by, in the order they are looked for. */
const TELLING_ARGUMENTS = ['command', 'path', 'title', 'pattern', 'summary', 'message'] as const;

/**
 * Each agent's call in flight, folded from the log: set when a model call or a tool call
 * starts, cleared when it ends, when the agent waits, and when the agent ends.
 */
export interface AgentActivityFold {
  add(event: ColonyEvent): void;
  /** The call in flight for the agent, or null when it is between calls, waiting or ended. */
  of(agentId: string): AgentActivity | null;
}

export function createAgentActivityFold(): AgentActivityFold {
  const current = new Map<string, AgentActivity>();
  return {
    add(event) {
      switch (event.type) {
        case 'model.requested':
          current.set(event.agentId, { kind: 'model', name: event.data.model, detail: `step ${event.data.step}`, since: event.ts });
          return;
        case 'tool.started':
          current.set(event.agentId, { kind: 'tool', name: event.data.name, detail: describeToolInput(event.data.input), since: event.ts });
          return;
        case 'acceptance.started':
          current.set(event.agentId, { kind: 'acceptance', name: 'acceptance', detail: describeToolInput(event.data.commands.join('; ')), since: event.ts });
          return;
        case 'acceptance.checked':
        case 'model.responded':
        case 'model.failed':
        case 'tool.ended':
        case 'agent.waiting':
        case 'agent.parked':
        case 'agent.ended':
        case 'agent.failed':
          current.delete(event.agentId);
          return;
        default:
          // Only the events that start or end a call change what an agent is doing.
          return;
      }
    },
    of: (agentId) => current.get(agentId) ?? null,
  };
}

/**
 * A tool call's arguments as a person tells calls apart: the command it runs or the path it
 * touches, on one line and cut short. Arguments that are not JSON (a model's malformed call)
 * are shown as sent.
 */
export function describeToolInput(input: string): string {
  let text = input;
  try {
    const parsed: unknown = JSON.parse(input);
    if (typeof parsed === 'object' && parsed !== null) {
      const record = parsed as Record<string, unknown>;
      const telling = TELLING_ARGUMENTS.map((name) => record[name]).find((value) => typeof value === 'string');
      text = typeof telling === 'string' ? telling : JSON.stringify(parsed);
    }
  } catch {
    // Shown as the model sent it.
  }
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > DETAIL_CHARS ? `${line.slice(0, DETAIL_CHARS - 1)}…` : line;
}
