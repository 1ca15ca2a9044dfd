/** One model of the registry (api doc §7). Prices are USD per million tokens. */
export interface ModelSpec {
  id: string;
  aliases: readonly string[];
  contextWindow: number;
  maxOutputTokens: number;
  inputPricePerMTok: number;
  outputPricePerMTok: number;
  /** Below this many prefix tokens nothing is cached (api doc §5). */
  minCacheableTokens: number;
  /** Which `thinking.type` values the model accepts (api doc §8). */
  thinking: { enabled: boolean; adaptive: boolean; disabled: boolean };
  /** A trailing assistant message (prefill) is accepted; models from 4.6 on reject it (api doc §1). */
  supportsPrefill?: boolean;
  /**
   * Thinking from earlier turns stays in the prompt (Opus 4.5+, Sonnet 4.6+; default true).
   * Elsewhere a user turn that is not only tool results strips it, which changes the cache prefix
   * of what follows (api doc §5).
   */
  keepsPriorThinking?: boolean;
  /**
   * Tokens per simulator-tokenizer token (default 1). The Opus 4.7+ tokenizer yields about 30%
   * more tokens for the same text (api doc §7), so those models use 1.3.
   */
  tokenFactor?: number;
  /**
   * A forced `tool_choice` is refused even under adaptive thinking (Opus 5.5, Sonnet 5.5,
   * Fable 5.1 per the thinking docs); other models accept it and skip thinking for that reply.
   */
  refusesForcedToolWithThinking?: boolean;
  /**
   * `role: "system"` messages inside `messages[]` are accepted (default true). Models before
   * 4.6 predate them (which models exactly is UNCONFIRMED: the registry follows prefill support).
   */
  supportsSystemMessages?: boolean;
}

const PRE_47 = { enabled: true, adaptive: false, disabled: true } as const;
const BOTH = { enabled: true, adaptive: true, disabled: true } as const;
const ADAPTIVE_ONLY = { enabled: false, adaptive: true, disabled: true } as const;
const FABLE = { enabled: false, adaptive: true, disabled: false } as const;

/**
 * Minimum cacheable length for the 4.8 / 5.x families is UNCONFIRMED (api doc §5): we pick 1024
 * (Opus 5: 512, from its announcement).
 */
const UNCONFIRMED_MIN_CACHE = 1024;

function model(
  id: string,
  aliases: readonly string[],
  contextWindow: number,
  maxOutputTokens: number,
  prices: readonly [number, number],
  minCacheableTokens: number,
  thinking: ModelSpec["thinking"],
): ModelSpec {
  return {
    id,
    aliases,
    contextWindow,
    maxOutputTokens,
    inputPricePerMTok: prices[0],
    outputPricePerMTok: prices[1],
    minCacheableTokens,
    thinking,
    supportsPrefill: thinking === PRE_47,
    supportsSystemMessages: thinking !== PRE_47,
    keepsPriorThinking: !STRIPS_PRIOR_THINKING.has(id),
    tokenFactor: LARGER_TOKENIZER.has(id) ? 1.3 : 1,
    refusesForcedToolWithThinking: REFUSES_FORCED_TOOL_WITH_THINKING.has(id),
  };
}

const STRIPS_PRIOR_THINKING = new Set([
  "claude-haiku-4-5-20251001",
  "claude-sonnet-4-5-20250929",
  "claude-opus-4-1-20250805",
]);

const REFUSES_FORCED_TOOL_WITH_THINKING = new Set([
  "claude-opus-5-5",
  "claude-sonnet-5-5",
  "claude-fable-5-1",
]);

/** Opus 4.7 and later Opus models count about 30% more tokens (api doc §7). */
const LARGER_TOKENIZER = new Set(["claude-opus-4-7", "claude-opus-4-8", "claude-opus-5", "claude-opus-5-5"]);

const K = 1000;
const M = 1_000_000;

/** The models of api doc §7. */
export const MODELS: readonly ModelSpec[] = [
  model("claude-haiku-4-5-20251001", ["claude-haiku-4-5"], 200 * K, 64 * K, [1, 5], 4096, PRE_47),
  model("claude-sonnet-4-5-20250929", ["claude-sonnet-4-5"], 200 * K, 64 * K, [3, 15], 1024, PRE_47),
  model("claude-opus-4-5-20251101", ["claude-opus-4-5"], 200 * K, 64 * K, [5, 25], 4096, PRE_47),
  model("claude-opus-4-1-20250805", ["claude-opus-4-1"], 200 * K, 32 * K, [15, 75], 1024, PRE_47),
  model("claude-sonnet-4-6", [], M, 128 * K, [3, 15], 2048, BOTH),
  model("claude-opus-4-6", [], M, 128 * K, [5, 25], 4096, BOTH),
  model("claude-opus-4-7", [], M, 128 * K, [5, 25], 4096, ADAPTIVE_ONLY),
  model("claude-opus-4-8", [], M, 128 * K, [5, 25], UNCONFIRMED_MIN_CACHE, ADAPTIVE_ONLY),
  model("claude-sonnet-5", [], M, 128 * K, [2, 10], UNCONFIRMED_MIN_CACHE, ADAPTIVE_ONLY),
  // 512: Opus 5's announcement (issue 18).
  model("claude-opus-5", [], M, 128 * K, [5, 25], 512, ADAPTIVE_ONLY),
  model("claude-fable-5", [], M, 128 * K, [10, 50], UNCONFIRMED_MIN_CACHE, FABLE),
  model("claude-fable-5-1", [], M, 128 * K, [10, 50], UNCONFIRMED_MIN_CACHE, FABLE),
  model("claude-fable-5-2", [], M, 128 * K, [8, 40], UNCONFIRMED_MIN_CACHE, FABLE),
  model("claude-opus-5-5", [], M, 128 * K, [4, 20], UNCONFIRMED_MIN_CACHE, ADAPTIVE_ONLY),
  model("claude-sonnet-5-5", [], M, 128 * K, [2, 10], UNCONFIRMED_MIN_CACHE, ADAPTIVE_ONLY),
  // "from 0.10/0.50": we use the floor price.
  model("claude-haiku-5-5", [], M, 128 * K, [0.1, 0.5], UNCONFIRMED_MIN_CACHE, ADAPTIVE_ONLY),
];

/** A registry: the built-in models plus overrides (an override with a known id replaces it). */
export class ModelRegistry {
  readonly #byName = new Map<string, ModelSpec>();

  constructor(extra: readonly ModelSpec[] = []) {
    for (const spec of [...MODELS, ...extra]) {
      // An override of a model's id replaces that model entirely, aliases included (an override
      // named by an alias rebinds just that alias).
      const replaced = this.#byName.get(spec.id);
      if (replaced?.id === spec.id)
        for (const [name, known] of this.#byName) if (known === replaced) this.#byName.delete(name);
      this.#byName.set(spec.id, spec);
      for (const alias of spec.aliases) this.#byName.set(alias, spec);
    }
  }

  resolve(id: string): ModelSpec | undefined {
    return this.#byName.get(id);
  }

  /** Every model once (overrides replace built-ins), in registry order. */
  list(): ModelSpec[] {
    return [...new Set(this.#byName.values())];
  }
}

const builtin = new ModelRegistry();

/** Looks a model id or alias up in the built-in registry. */
export function resolveModel(id: string): ModelSpec | undefined {
  return builtin.resolve(id);
}

/** The context window with the 1M beta applied (Sonnet 4.5 only, api doc §7). */
export function effectiveContextWindow(spec: ModelSpec, betas: readonly string[]): number {
  if (spec.id === "claude-sonnet-4-5-20250929" && betas.includes("context-1m-2025-08-07")) return M;
  return spec.contextWindow;
}
