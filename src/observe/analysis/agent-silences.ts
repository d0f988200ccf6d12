import type { ColonyEvent } from '../../events/event-types.js';
import type { AgentRole } from '../../events/event-fields.js';
import type { AgentSilence, HungAgent, LoopAnalysis, StallAnalysis, ToolLoop } from './types.js';
import type { EventOf } from '../event-of.js';
import { createTopList } from '../ranking.js';
import { headOf, textKey } from '../text-keys.js';

/** Calls in a row with the same tool and input that make a loop. */
export const LOOP_REPEATS = 3;

const SILENCES_LISTED = 5;
const LOOPS_LISTED = 10;
const INPUT_CHARS = 300;

/** Who an agent is, as its `agent.started` said. */
export interface AgentIdentity {
  readonly role: AgentRole;
  readonly taskId: string;
}

interface Streak {
  readonly tool: string;
  /** The input's key (see `textKey`): a long input is held by its digest. */
  readonly key: string;
  /** The input as reported: its start when it is long. */
  readonly input: string;
  count: number;
  readonly at: number;
}

interface AgentTrack {
  lastTs: number | null;
  lastType: string;
  /** Its last event says it waits on purpose (for messages, or for a provider). */
  excused: boolean;
  ended: boolean;
  longest: { silentMs: number; from: number; after: string; endedBy: string } | null;
  streak: Streak | null;
}

/**
 * How each agent spent its time between its own events: its longest silence, and runs of the
 * same tool call. One small record per agent, whatever the length of the log.
 */
export interface AgentSilences {
  /** An event recorded under an agent's id, in seq order. */
  agentEvent(event: ColonyEvent, identity: AgentIdentity | undefined): void;
  hung(event: EventOf<'agent.hung'>): void;
  /** The run was taken up again: the time it was down is nobody's silence. */
  resumed(): void;
  stalls(lastEventAt: number, identities: ReadonlyMap<string, AgentIdentity>): StallAnalysis;
  loops(identities: ReadonlyMap<string, AgentIdentity>): LoopAnalysis;
}

export function createAgentSilences(): AgentSilences {
  const tracks = new Map<string, AgentTrack>();
  const hung: HungAgent[] = [];
  const loops = createTopList<ToolLoop>(LOOPS_LISTED, (a, b) => b.repeats - a.repeats);
  let loopTotal = 0;

  const closeStreak = (agentId: string, streak: Streak | null, identity: AgentIdentity | undefined): void => {
    if (streak === null || streak.count < LOOP_REPEATS) return;
    loopTotal += 1;
    loops.add(loopOf(agentId, streak, identity));
  };

  return {
    agentEvent(event, identity) {
      let track = tracks.get(event.agentId);
      if (track === undefined) {
        if (event.type !== 'agent.started') return;
        track = { lastTs: null, lastType: event.type, excused: false, ended: false, longest: null, streak: null };
        tracks.set(event.agentId, track);
      }
      if (track.lastTs !== null && !track.excused) {
        const silentMs = event.ts - track.lastTs;
        if (track.longest === null || silentMs > track.longest.silentMs) {
          track.longest = { silentMs, from: track.lastTs, after: track.lastType, endedBy: event.type };
        }
      }
      track.lastTs = event.ts;
      track.lastType = event.type;
      track.excused = event.type === 'agent.waiting' || event.type === 'agent.parked';
      if (event.type === 'agent.ended' || event.type === 'agent.failed') {
        track.ended = true;
        closeStreak(event.agentId, track.streak, identity);
        track.streak = null;
      }
      if (event.type === 'agent.started' || event.type === 'agent.restored') track.ended = false;
      if (event.type !== 'tool.started') return;
      const { name, input } = event.data;
      const key = textKey(input);
      if (track.streak !== null && track.streak.tool === name && track.streak.key === key) {
        track.streak.count += 1;
        return;
      }
      closeStreak(event.agentId, track.streak, identity);
      track.streak = { tool: name, key, input: headOf(input, INPUT_CHARS), count: 1, at: event.ts };
    },
    hung(event) {
      const { hungAgentId, taskId, silentMs, limitMs } = event.data;
      hung.push({ agentId: hungAgentId, taskId, silentMs, limitMs, at: event.ts });
    },
    resumed() {
      for (const track of tracks.values()) track.lastTs = null;
    },
    stalls(lastEventAt, identities) {
      const silences = createTopList<AgentSilence>(SILENCES_LISTED, (a, b) => b.silentMs - a.silentMs);
      for (const [agentId, track] of tracks) {
        const identity = identities.get(agentId);
        const still = !track.ended && !track.excused && track.lastTs !== null ? lastEventAt - track.lastTs : 0;
        const best = track.longest;
        if (best !== null && best.silentMs >= still) silences.add({ agentId, role: identity?.role ?? null, taskId: identity?.taskId ?? null, ...best });
        else if (still > 0 && track.lastTs !== null) {
          silences.add({ agentId, role: identity?.role ?? null, taskId: identity?.taskId ?? null, silentMs: still, from: track.lastTs, after: track.lastType, endedBy: null });
        }
      }
      return { hung: hung.map((entry) => ({ ...entry })), longestSilences: silences.items() };
    },
    loops(identities) {
      // Streaks still going at the end of the log count as they stand, without closing them.
      const listed = createTopList<ToolLoop>(LOOPS_LISTED, (a, b) => b.repeats - a.repeats);
      for (const loop of loops.items()) listed.add(loop);
      let total = loopTotal;
      for (const [agentId, track] of tracks) {
        if (track.streak === null || track.streak.count < LOOP_REPEATS) continue;
        total += 1;
        listed.add(loopOf(agentId, track.streak, identities.get(agentId)));
      }
      return { loops: listed.items(), total };
    },
  };
}

function loopOf(agentId: string, streak: Streak, identity: AgentIdentity | undefined): ToolLoop {
  return { agentId, taskId: identity?.taskId ?? null, tool: streak.tool, input: streak.input, repeats: streak.count, at: streak.at };
}
