import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';

/** The providers' rule of thumb: about four bytes of English or code to a token. */
const BYTES_PER_TOKEN = 4;
/** The shortest prefix either provider caches. */
const MIN_CACHED_TOKENS = 1024;
/** OpenAI caches a long prompt in blocks of this many tokens past the first 1024. */
const BLOCK_TOKENS = 128;
/** How many block boundaries before a breakpoint Anthropic checks for an earlier cached prefix. */
const LOOKBACK_UNITS = 20;
/** Anthropic's limit on `cache_control` marks in one request. */
export const MAX_BREAKPOINTS = 4;
/** Both providers keep a prefix about five minutes after its last use. */
const TIME_TO_LIVE_MS = 5 * 60_000;
const DEFAULT_MAX_ENTRIES = 50_000;

/**
 * One piece of a prompt as the cache sees it: a tool definition, a system block, an OpenAI
 * message, or one content block of an Anthropic message.
 */
export interface PromptUnit {
  /** The piece as canonical JSON (keys sorted, its `cache_control` left out), in UTF-8. */
  readonly bytes: Buffer;
  /** ceil(bytes / 4). */
  readonly tokens: number;
  /** Whether the piece carries Anthropic's `cache_control` mark. */
  readonly breakpoint: boolean;
}

/** A request's prompt as the cache sees it. */
export interface CacheablePrompt {
  /**
   * `breakpoints`: Anthropic's, cached only where the request marks it. `automatic`: OpenAI's,
   * every 128-token block past the first 1024, with no marks.
   */
  readonly scheme: 'breakpoints' | 'automatic';
  /** Prompts share cached prefixes only within one partition: the model, and OpenAI's `prompt_cache_key`. */
  readonly partition: string;
  readonly units: readonly PromptUnit[];
}

/** How a request's input tokens bill: `total` includes the tokens read from and written to the cache. */
export interface CachedInputUsage {
  readonly total: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

export interface PromptCacheOptions {
  /** The most prefixes held across all partitions; the least recently used go first. 50,000 when absent. */
  readonly maxEntries?: number;
}

export interface PromptCache {
  /** Reads the longest cached prefix of `prompt`, stores its own prefixes, and says how its input bills. */
  account(prompt: CacheablePrompt): CachedInputUsage;
}

/** `piece` as a prompt unit: its canonical bytes, its tokens, and whether it is a breakpoint. */
export function promptUnit(piece: Readonly<Record<string, unknown>>): PromptUnit {
  const { cache_control: cacheControl, ...rest } = piece;
  const bytes = Buffer.from(canonicalJson(rest), 'utf8');
  return {
    bytes,
    tokens: Math.ceil(bytes.length / BYTES_PER_TOKEN),
    breakpoint: cacheControl !== undefined && cacheControl !== null,
  };
}

/**
 * A simulation of the providers' prompt caches, to bill input as they would from the
 * request's bytes alone. It holds sha256 digests of prefixes and their token counts, never
 * the text; an entry lives five minutes after its last write or read, by `now`.
 *
 * A prefix of L tokens is the bytes those tokens stand for: the units it covers whole, then
 * the first 4 × (L − tokens of those units) bytes of the unit the boundary falls in. Its
 * digest covers the scheme and partition, then each unit's bytes after a newline (which
 * canonical JSON never holds), so the sequence of units is unambiguous.
 *
 * Anthropic (`breakpoints`): a marked unit's prefix is cached if it has at least 1024
 * tokens (a mark's `ttl` of an hour is held to five minutes too). For each mark, the longest
 * cached prefix ending at the mark or at one of the 20 unit boundaries before it is read (and
 * its life renewed); then each mark's prefix not cached yet is written. Read is the longest prefix read; written is the tokens from its end
 * to the furthest mark written.
 *
 * OpenAI (`automatic`): a prompt of at least 1024 tokens is cached at 1024, 1152, 1280, …
 * tokens, up to its length. Read is the longest of those prefixes found; then all of them
 * are stored. OpenAI bills no writes.
 */
export function createPromptCache(now: () => number, options: PromptCacheOptions = {}): PromptCache {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  /** Digest to its token count and expiry; a Map keeps insertion order, the least recently used first. */
  const entries = new Map<string, { readonly tokens: number; readonly expiresAt: number }>();

  function find(digest: string): number | null {
    const entry = entries.get(digest);
    if (entry === undefined) return null;
    if (entry.expiresAt <= now()) {
      entries.delete(digest);
      return null;
    }
    return entry.tokens;
  }

  function keep(digest: string, tokens: number): void {
    entries.delete(digest);
    entries.set(digest, { tokens, expiresAt: now() + TIME_TO_LIVE_MS });
    for (const oldest of entries.keys()) {
      if (entries.size <= maxEntries) break;
      entries.delete(oldest);
    }
  }

  function accountBreakpoints(prompt: CacheablePrompt): CachedInputUsage {
    const ends: number[] = [];
    for (const unit of prompt.units) ends.push((ends.at(-1) ?? 0) + unit.tokens);
    const prefixes = zip(ends, prefixDigests(prompt, ends)).map(([tokens, digest]) => ({ tokens, digest }));
    const marked = zip(prompt.units, prefixes).flatMap(([unit, prefix], index) => (unit.breakpoint ? [{ index, prefix }] : []));
    let read = 0;
    for (const { index } of marked) {
      const window = prefixes.slice(Math.max(0, index - LOOKBACK_UNITS), index + 1).reverse();
      for (const prefix of window) {
        const tokens = find(prefix.digest);
        if (tokens === null) continue;
        keep(prefix.digest, tokens);
        read = Math.max(read, tokens);
        break;
      }
    }
    let written = read;
    for (const { prefix } of marked) {
      if (prefix.tokens < MIN_CACHED_TOKENS || find(prefix.digest) !== null) continue;
      keep(prefix.digest, prefix.tokens);
      written = Math.max(written, prefix.tokens);
    }
    return { total: ends.at(-1) ?? 0, cacheRead: read, cacheWrite: written - read };
  }

  function accountAutomatic(prompt: CacheablePrompt): CachedInputUsage {
    const total = prompt.units.reduce((sum, unit) => sum + unit.tokens, 0);
    const lengths: number[] = [];
    for (let length = MIN_CACHED_TOKENS; length <= total; length += BLOCK_TOKENS) lengths.push(length);
    const prefixes = zip(lengths, prefixDigests(prompt, lengths));
    let read = 0;
    for (const [length, digest] of prefixes) {
      if (find(digest) !== null) read = length;
    }
    for (const [length, digest] of prefixes) keep(digest, length);
    return { total, cacheRead: read, cacheWrite: 0 };
  }

  return {
    account: (prompt) => (prompt.scheme === 'breakpoints' ? accountBreakpoints(prompt) : accountAutomatic(prompt)),
  };
}

/** The digest of the prefix of each of `lengths` tokens (ascending, none past the prompt's end). */
function prefixDigests(prompt: CacheablePrompt, lengths: readonly number[]): string[] {
  const running: Hash = createHash('sha256').update(`${JSON.stringify([prompt.scheme, prompt.partition])}\n`);
  const digests: string[] = [];
  let covered = 0;
  let next = 0;
  for (const length of lengths) {
    let unit = prompt.units[next];
    while (unit !== undefined && covered + unit.tokens <= length) {
      running.update('\n').update(unit.bytes);
      covered += unit.tokens;
      next += 1;
      unit = prompt.units[next];
    }
    const rest = length - covered;
    if (rest === 0 || unit === undefined) {
      digests.push(running.copy().digest('hex'));
    } else {
      digests.push(running.copy().update('\n').update(unit.bytes.subarray(0, rest * BYTES_PER_TOKEN)).digest('hex'));
    }
  }
  return digests;
}

function zip<A, B>(left: readonly A[], right: readonly B[]): [A, B][] {
  return left.flatMap((value, index) => {
    const other = right[index];
    return other === undefined ? [] : [[value, other] as [A, B]];
  });
}

/** JSON with every object's keys sorted, so the same content gives the same bytes whatever the client's key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return inner;
    return Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}
