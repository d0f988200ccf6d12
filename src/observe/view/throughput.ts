import type { ColonyEvent } from '../../events/event-types.js';

/** What the run did in one interval of time (a minute by default). */
export interface ThroughputPoint {
  /** The interval's start, in milliseconds since the epoch. */
  readonly start: number;
  readonly commits: number;
  readonly toolCalls: number;
  readonly modelCalls: number;
  /** Input plus output tokens of the model calls (summaries included) answered in it. */
  readonly tokens: number;
}

export interface ThroughputOptions {
  /** The interval's length; a minute by default. */
  readonly bucketMs?: number;
  /** How many intervals are kept: older ones are dropped, so a run of days stays small. */
  readonly keep?: number;
}

/** Throughput over time, folded one event at a time into fixed intervals. */
export interface ThroughputFold {
  add(event: ColonyEvent): void;
  /**
   * The last `count` intervals up to the one holding `now`, oldest first, with empty intervals
   * as zeros; none before the first event.
   */
  series(now: number, count: number): ThroughputPoint[];
}

interface Bucket {
  commits: number;
  toolCalls: number;
  modelCalls: number;
  tokens: number;
}

export function createThroughputFold(options: ThroughputOptions = {}): ThroughputFold {
  const bucketMs = options.bucketMs ?? 60_000;
  const keep = options.keep ?? 240;
  const buckets = new Map<number, Bucket>();
  let first: number | null = null;

  function bucketAt(ts: number): Bucket {
    const start = Math.floor(ts / bucketMs) * bucketMs;
    first ??= start;
    let bucket = buckets.get(start);
    if (bucket === undefined) {
      bucket = { commits: 0, toolCalls: 0, modelCalls: 0, tokens: 0 };
      buckets.set(start, bucket);
      // Maps iterate in insertion order and time only moves forward, so the oldest is first.
      while (buckets.size > keep) {
        const oldest = buckets.keys().next().value;
        if (oldest === undefined) break;
        buckets.delete(oldest);
      }
    }
    return bucket;
  }

  return {
    add(event) {
      switch (event.type) {
        case 'merge.landed':
          bucketAt(event.ts).commits += 1;
          return;
        case 'tool.started':
          bucketAt(event.ts).toolCalls += 1;
          return;
        case 'model.responded': {
          const bucket = bucketAt(event.ts);
          bucket.modelCalls += 1;
          bucket.tokens += event.data.usage.inputTokens + event.data.usage.outputTokens;
          return;
        }
        case 'context.compacted':
          bucketAt(event.ts).tokens += event.data.usage.inputTokens + event.data.usage.outputTokens;
          return;
        default:
          // Only landed commits, tool calls and answered model calls are throughput.
          return;
      }
    },
    series(now, count) {
      if (first === null) return [];
      const last = Math.floor(now / bucketMs) * bucketMs;
      const from = Math.max(first, last - (count - 1) * bucketMs);
      const points: ThroughputPoint[] = [];
      for (let start = from; start <= last; start += bucketMs) {
        const bucket = buckets.get(start);
        points.push({ start, commits: bucket?.commits ?? 0, toolCalls: bucket?.toolCalls ?? 0, modelCalls: bucket?.modelCalls ?? 0, tokens: bucket?.tokens ?? 0 });
      }
      return points;
    },
  };
}
