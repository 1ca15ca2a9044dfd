import { createHash } from "node:crypto";
import type { Breakpoint, Ttl } from "./cache-breakpoints.js";
import type { PromptLayout } from "./prompt-layout.js";

/** The input-side usage counters (api doc §2). */
export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

export interface CacheAccount {
  usage: CacheUsage;
  /** The cumulative cache key of each prompt position (cacheKeys); the diagnostics reuse them. */
  keys: readonly string[];
  /**
   * Makes this request's writes readable. The server calls it when the response starts: an entry
   * is available only after the first response begins, so parallel requests all miss (api doc §5).
   */
  commit(): void;
}

export interface AccountInput {
  /** Who may share entries (the API key) — caches never cross organisations. */
  scope: string;
  /** The request's place in arrival order (`arrive()`, taken when the request came in). */
  arrival: number;
  modelId: string;
  layout: PromptLayout;
  breakpoints: readonly Breakpoint[];
  minCacheableTokens: number;
}

/** Reads walk back at most this many positions per breakpoint, the breakpoint included (api doc §5). */
const LOOKBACK_POSITIONS = 20;

const TTL_MS: Readonly<Record<Ttl, number>> = { "5m": 5 * 60_000, "1h": 60 * 60_000 };
const SWEEP_THRESHOLD = 50_000;

interface Entry {
  expiresAt: number;
  ttl: Ttl;
  /** The event number of the response start that wrote it: only later arrivals may read it. */
  writtenAt: number;
}

/**
 * The simulator's prompt cache, by the documented rules (api doc §5, R-D3): keys are
 * cumulative hashes over the canonical prefix tools → system → messages; writes only at
 * breakpoints; reads look back ≤ 20 positions per breakpoint; per-model minimum length; TTL
 * 5m / 1h refreshed on hit, on the injected clock.
 */
export class PromptCache {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: () => number;
  /** Orders arrivals and response starts: one counter for both. */
  #events = 0;

  constructor(clock: () => number) {
    this.#clock = clock;
  }

  /**
   * Numbers a request as it arrives. An entry is readable only by requests that arrived after
   * the response that wrote it started (api doc §5: parallel requests all miss until the first
   * response begins) — also with no latency model, where a response starts within the same
   * millisecond as a request that came in while it was being prepared.
   */
  arrive(): number {
    return ++this.#events;
  }

  /**
   * Accounts one request: finds its cache hit and stages its refresh and writes, which `commit`
   * applies (a request refused by a rate limit or a fault never touches the cache).
   */
  account(input: AccountInput): CacheAccount {
    const now = this.#clock();
    this.#sweep(now);
    const { layout } = input;
    const keys = cacheKeys(input.scope, input.modelId, layout);
    const cumulative = prefixSums(layout);
    const tokensThrough = (i: number): number => (i < 0 ? 0 : (cumulative[i] ?? 0));
    const eligible = input.breakpoints.filter((b) => tokensThrough(b.position) >= input.minCacheableTokens);

    let hit = -1;
    for (const bp of eligible) {
      const stop = Math.max(0, bp.position - LOOKBACK_POSITIONS + 1);
      for (let j = bp.position; j >= stop; j--) {
        const entry = this.#live(keys[j], now);
        if (entry && entry.writtenAt < input.arrival) {
          hit = Math.max(hit, j);
          break;
        }
      }
    }
    const writes = eligible.filter((b) => b.position > hit);
    let covered = hit;
    let written1h = 0;
    let written5m = 0;
    // 1h breakpoints precede 5m ones (validated), so the regions split cleanly (api doc §5).
    for (const w of writes) {
      const region = tokensThrough(w.position) - tokensThrough(covered);
      if (w.ttl === "1h") written1h += region;
      else written5m += region;
      covered = w.position;
    }
    const usage: CacheUsage = {
      input_tokens: layout.totalTokens - tokensThrough(covered),
      cache_creation_input_tokens: written1h + written5m,
      cache_read_input_tokens: tokensThrough(hit),
      cache_creation: { ephemeral_5m_input_tokens: written5m, ephemeral_1h_input_tokens: written1h },
    };
    let committed = false;
    return {
      usage,
      keys,
      commit: () => {
        if (committed) return;
        committed = true;
        const startedAt = ++this.#events;
        // A hit refreshes, for free and from request start, the entries of the prefix it read.
        for (const bp of eligible) {
          if (bp.position <= hit) this.#refresh(keys[bp.position], now);
        }
        if (hit >= 0) this.#refresh(keys[hit], now);
        for (const w of writes) this.#store(keys[w.position], w.ttl, now, startedAt);
      },
    };
  }

  /** Number of live entries (for tests and diagnostics). */
  size(): number {
    const now = this.#clock();
    let n = 0;
    for (const e of this.#entries.values()) if (e.expiresAt > now) n++;
    return n;
  }

  #live(key: string | undefined, now: number): Entry | undefined {
    if (key === undefined) return undefined;
    const entry = this.#entries.get(key);
    return entry && entry.expiresAt > now ? entry : undefined;
  }

  #refresh(key: string | undefined, now: number): void {
    const entry = this.#live(key, now);
    if (entry) entry.expiresAt = Math.max(entry.expiresAt, now + TTL_MS[entry.ttl]);
  }

  #store(key: string | undefined, ttl: Ttl, requestStart: number, writtenAt: number): void {
    if (key === undefined) return;
    const expiresAt = requestStart + TTL_MS[ttl];
    const existing = this.#live(key, requestStart);
    if (existing && existing.expiresAt >= expiresAt) return;
    // A live entry stays readable by whoever could read it already.
    this.#entries.set(key, { expiresAt, ttl, writtenAt: existing?.writtenAt ?? writtenAt });
  }

  #sweep(now: number): void {
    if (this.#entries.size < SWEEP_THRESHOLD) return;
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }
}

/**
 * One cumulative key per position. The system-section config is mixed in where system starts and
 * the messages config (tool_choice, thinking) where messages start, so changing tools changes
 * every key, system changes system + messages keys, tool_choice/thinking only message keys.
 */
function cacheKeys(scope: string, modelId: string, layout: PromptLayout): string[] {
  const hash = createHash("sha256");
  hash.update(`${scope}\u0000${modelId}\u0000`);
  const keys: string[] = [];
  let systemMixed = false;
  let messagesMixed = false;
  for (const p of layout.positions) {
    if (p.section !== "tools" && !systemMixed) {
      hash.update(`\u0001system:${layout.systemConfig}`);
      systemMixed = true;
    }
    if (p.section === "messages" && !messagesMixed) {
      hash.update(`\u0001messages:${layout.messagesConfig}`);
      messagesMixed = true;
    }
    hash.update(`\u0002${p.canonical}`);
    keys.push(hash.copy().digest("base64"));
  }
  return keys;
}

function prefixSums(layout: PromptLayout): number[] {
  const sums: number[] = [];
  let total = 0;
  for (const p of layout.positions) {
    total += p.tokens;
    sums.push(total);
  }
  return sums;
}
