import {
  type EffortLevel,
  MODEL_TABLE,
  type ModelRow,
  type PriceTier,
  TOKENIZER_FACTOR,
} from "./model-table.js";

export type { EffortLevel, ModelRow } from "./model-table.js";

/**
 * One model as the simulator applies it (R-D1): the model table's row in the shape the checks
 * read. Prices are USD per million tokens. Only the first fields are required so tests can add a
 * model with a tiny window; every optional field has the permissive default noted.
 */
export interface ModelSpec {
  id: string;
  aliases: readonly string[];
  contextWindow: number;
  maxOutputTokens: number;
  inputPricePerMTok: number;
  outputPricePerMTok: number;
  /** Prompt-length price bands above the base prices (default none: one price at any length). */
  priceTiers?: readonly PriceTier[];
  /** A cache read's share of the input price (default 0.1). */
  cacheReadMultiplier?: number;
  /** Below this many prefix tokens nothing is cached (prompt caching page). */
  minCacheableTokens: number;
  /** Which `thinking.type` values the model accepts. */
  thinking: { enabled: boolean; adaptive: boolean; disabled: boolean };
  /** A trailing assistant message (prefill) is accepted (default false: models from 4.6 on). */
  supportsPrefill?: boolean;
  /** Thinking of earlier turns stays in the prompt (default true). */
  keepsPriorThinking?: boolean;
  /** Tokens per simulator-tokenizer token (default 1; the newer tokenizer 1.3). */
  tokenFactor?: number;
  /** A forced tool_choice is refused under adaptive thinking too (default false). */
  refusesForcedToolWithThinking?: boolean;
  /** `role: "system"` messages inside `messages` are accepted (default true). */
  supportsSystemMessages?: boolean;
  /** `output_config.effort` levels accepted (default: all five). */
  effort?: readonly EffortLevel[];
  /** Efforts refused with thinking disabled (default none). */
  effortNeedsThinking?: readonly EffortLevel[];
  /** `thinking.display` when the request names none (default "summarized"). */
  displayDefault?: "summarized" | "omitted";
  /** `thinking.display: "updates"` is accepted (default false). */
  displayUpdates?: boolean;
  /** Retired models answer inference with 404 (default active). */
  retired?: boolean;
  /** The table row, for the Models API; absent for test-made models. */
  row?: ModelRow;
}

/** The model table's row as a spec. */
function specOfRow(row: ModelRow): ModelSpec {
  return {
    id: row.id,
    aliases: row.aliases,
    contextWindow: row.contextWindow,
    maxOutputTokens: row.maxOutputTokens,
    inputPricePerMTok: row.inputPricePerMTok,
    outputPricePerMTok: row.outputPricePerMTok,
    ...(row.priceTiers ? { priceTiers: row.priceTiers } : {}),
    ...(row.cacheReadMultiplier === undefined ? {} : { cacheReadMultiplier: row.cacheReadMultiplier }),
    minCacheableTokens: row.minCacheableTokens,
    thinking: row.thinking,
    supportsPrefill: row.prefill,
    keepsPriorThinking: row.keepsPriorThinking,
    tokenFactor: TOKENIZER_FACTOR[row.tokenizer],
    refusesForcedToolWithThinking: row.refusesForcedToolWithThinking,
    supportsSystemMessages: row.systemMessages,
    effort: row.effort,
    effortNeedsThinking: row.effortNeedsThinking,
    displayDefault: row.displayDefault,
    displayUpdates: row.displayUpdates,
    retired: row.lifecycle === "retired",
    row,
  };
}

/** The models of the model table (retired ones included: they answer 404, as the API does). */
export const MODELS: readonly ModelSpec[] = MODEL_TABLE.map(specOfRow);

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
  if (spec.id === "claude-sonnet-4-5-20250929" && betas.includes("context-1m-2025-08-07")) return 1_000_000;
  return spec.contextWindow;
}
