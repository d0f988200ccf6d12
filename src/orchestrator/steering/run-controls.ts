import type { EventStore } from '../../store/events/event-store.js';
import type { SteeringEffects } from './steering-record.js';
import type { UserStop } from './user-stop.js';

/** Where the user's stops reach a runner: it attaches how it stops the agent on a task. */
export interface UserStopSwitch {
  /** Returns the detach, for when the runner returns. Stops made while none is attached are not kept: the runner finds them in the store when it claims. */
  attach(stopper: (stop: UserStop) => void): () => void;
}

/**
 * What the user changes in a running run's process besides messages and the run's andon: the worker
 * limit the runner reads before each claim, and the stops it acts on. The steering recorder
 * drives it (`effects`) as it records each request; the runner reads `workers` and attaches to
 * `stops`. Made before either, so requests recorded before the runner starts count too.
 */
export interface RunControls {
  /** The most workers at once now: the latest the user set, else the run's own. */
  readonly workers: () => number;
  readonly effects: SteeringEffects;
  readonly stops: UserStopSwitch;
  /** Where `colony green --now` reaches the run's green loop, once it is started; a request made before waits for it. */
  readonly attachGreen: (request: () => void) => void;
}

export function createRunControls(initialWorkers: number): RunControls {
  let workers = initialWorkers;
  let stopper: ((stop: UserStop) => void) | null = null;
  let greenRequest: (() => void) | null = null;
  let greenAsked = false;
  return {
    workers: () => workers,
    attachGreen(request) {
      greenRequest = request;
      if (greenAsked) request();
      greenAsked = false;
    },
    effects: {
      greenRequested() {
        if (greenRequest === null) greenAsked = true;
        else greenRequest();
      },
      workersChanged(limit) {
        workers = limit;
      },
      stopTask(stop) {
        stopper?.(stop);
      },
    },
    stops: {
      attach(given) {
        stopper = given;
        return () => {
          if (stopper === given) stopper = null;
        };
      },
    },
  };
}

/**
 * The run's worker limit as its log has it: the latest `workers.changed`, else `configured` (the
 * run's `--workers`). A resumed run goes on with this, not with what it was started with.
 */
export async function workerLimitFromLog(events: EventStore, runId: string, configured: number): Promise<number> {
  const changed = (await events.read({ runId, types: ['workers.changed'] })).findLast((event) => event.type === 'workers.changed');
  return changed?.type === 'workers.changed' ? changed.data.workers : configured;
}
