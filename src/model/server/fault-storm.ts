import type { Fault } from './fault.js';

/** Where a storm is started over HTTP, for a server running in another process (`colony sim-server`). */
export const STORM_PATH = '/control/storm';

/**
 * A storm: for a while, every generation request gets the same fault, a 429 with a
 * retry-after say, the way a provider sheds load for everyone at once.
 */
export interface FaultStorm {
  /** Plays `fault` to every generation request for the next `durationMs`; replaces a storm under way. */
  start(fault: Fault, durationMs: number): void;
  /** The storm's fault while it lasts, else null. */
  current(): Fault | null;
}

export function createFaultStorm(now: () => number = () => performance.now()): FaultStorm {
  let storm: { readonly fault: Fault; readonly until: number } | null = null;
  return {
    start(fault, durationMs) {
      storm = { fault, until: now() + Math.max(0, durationMs) };
    },
    current() {
      if (storm === null || now() >= storm.until) return null;
      return storm.fault;
    },
  };
}

export type StormRequest = { readonly ok: true; readonly fault: Fault; readonly durationMs: number } | { readonly ok: false; readonly error: string };

const STORM_SHAPE =
  'Send {"seconds": N, "status": 429, "retryAfterSeconds": R} (retryAfterSeconds optional), ' +
  '{"seconds": N, "garbage": true} or {"seconds": N, "resetConnection": true}.';

/** A storm as asked for in a `POST /control/storm` body. */
export function parseStormRequest(body: unknown): StormRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, error: `The body is not a JSON object. ${STORM_SHAPE}` };
  const fields = body as Record<string, unknown>;
  const { seconds, status, retryAfterSeconds } = fields;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    return { ok: false, error: `"seconds" must be a number of seconds, 0 or more. ${STORM_SHAPE}` };
  }
  const durationMs = seconds * 1000;
  if (fields.garbage === true) return { ok: true, fault: { garbage: true }, durationMs };
  if (fields.resetConnection === true) return { ok: true, fault: { resetConnection: true }, durationMs };
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) {
    return { ok: false, error: `"status" must be an HTTP error status (400 to 599). ${STORM_SHAPE}` };
  }
  if (retryAfterSeconds === undefined) return { ok: true, fault: { status }, durationMs };
  if (typeof retryAfterSeconds !== 'number' || !Number.isFinite(retryAfterSeconds) || retryAfterSeconds < 0) {
    return { ok: false, error: `"retryAfterSeconds" must be a number of seconds, 0 or more. ${STORM_SHAPE}` };
  }
  return { ok: true, fault: { status, retryAfterSeconds }, durationMs };
}
