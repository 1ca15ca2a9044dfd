/**
 * THE MODEL TABLE (R-D1): one row per Claude model the API documents, read 2026-12-02. This file
 * has two byte-identical copies, `packages/loop-core/src/model-table.ts` (loop-core's catalog) and
 * `packages/sim/src/model-table.ts` (the simulator's registry): loop-core imports no sibling and
 * the simulator has no internal dependency (SPEC §0), so neither can import the other;
 * `test/model-table-copies.test.ts` fails when they differ. Edit one, copy it over the other.
 *
 * Sources (each row names its own model page too):
 * - models overview:      https://platform.claude.com/docs/en/models/overview
 * - model deprecations:   https://platform.claude.com/docs/en/about-claude/model-deprecations
 * - pricing:              https://platform.claude.com/docs/en/about-claude/pricing
 * - effort (which models, which levels): https://platform.claude.com/docs/en/build-with-claude/effort
 * - adaptive thinking, display defaults: https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking
 * - prompt caching (minimum cacheable length): https://platform.claude.com/docs/en/build-with-claude/prompt-caching
 * - token counting (the newer tokenizer): https://platform.claude.com/docs/en/build-with-claude/token-counting
 * - mid-conversation system messages: https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages
 * - message threads (supported models): https://platform.claude.com/docs/en/build-with-claude/message-threads
 * A value marked UNCONFIRMED is the table's choice where no page states it; the comment says why.
 * Release dates order the Models API's list (newest first). Fable 5's (June 9, 2026) and Haiku
 * 5.5's (October 7, 2026) are their overview pages'; Fable 5.2's is UNCONFIRMED (no Anthropic page
 * for it in reach; third-party listings, e.g. https://runware.ai/docs/models/anthropic-claude-fable-5-2,
 * give November 9, 2026).
 */

export type EffortLevel = "low" | "medium" | "high" | "xhigh" | "max";
export type ModelLine = "haiku" | "sonnet" | "opus" | "fable";
export type Lifecycle = "active" | "legacy" | "deprecated" | "retired";

/**
 * A prompt-length price band: a request whose prompt (input, cache writes and cache reads) is over
 * `abovePromptTokens` pays these prices on every token, output included; cache writes and reads keep
 * their multipliers of the input price. Haiku 5.5's overview page
 * (https://platform.claude.com/docs/en/models/haiku-5-5/overview): input "$0.10 / MTok for prompts
 * up to 100,000 tokens, $0.50 / MTok for prompts over 100,000 tokens", output $0.50 / $2.50, 5m
 * cache write $0.125 / $0.625, 1h $0.20 / $1.00.
 */
export interface PriceTier {
  readonly abovePromptTokens: number;
  readonly inputPricePerMTok: number;
  readonly outputPricePerMTok: number;
}

export interface ModelRow {
  readonly id: string;
  /** Other names that resolve to this row (the dated models' undated aliases). */
  readonly aliases: readonly string[];
  readonly displayName: string;
  readonly line: ModelLine;
  /** RFC 3339 date the model was released. */
  readonly releasedAt: string;
  /** Retired models answer 404 not_found_error to inference (model deprecations page). */
  readonly lifecycle: Lifecycle;
  readonly deprecatedAt: string | null;
  /** Retirement date (past for retired models, scheduled for deprecated ones). */
  readonly retiresAt: string | null;
  readonly contextWindow: number;
  readonly maxOutputTokens: number;
  /** USD per million input / output tokens (pricing page); for a tiered model, its lowest band. */
  readonly inputPricePerMTok: number;
  readonly outputPricePerMTok: number;
  /** Prompt-length price bands above the base prices (Haiku 5.5); absent = one price at any length. */
  readonly priceTiers?: readonly PriceTier[];
  /** A cache read's price as a share of the input price (pricing page: 0.1 unless a row says). */
  readonly cacheReadMultiplier?: number;
  /**
   * `classic`: the tokenizer of Claude 3 to Opus 4.6; `2026`: the newer one of Opus 4.7 and later
   * Opus models, Fable 5, Sonnet 5 — "approximately 30 percent more tokens" (token counting page).
   */
  readonly tokenizer: "classic" | "2026";
  /** Below this many prefix tokens nothing is cached (prompt caching page). */
  readonly minCacheableTokens: number;
  /** `output_config.effort` levels accepted; empty = the model refuses effort (effort page). */
  readonly effort: readonly EffortLevel[];
  /** Which `thinking.type` values the model accepts (adaptive thinking page, model pages). */
  readonly thinking: {
    readonly enabled: boolean;
    readonly adaptive: boolean;
    readonly disabled: boolean;
  };
  /** Efforts refused with thinking disabled (Opus 5: xhigh and max need thinking). */
  readonly effortNeedsThinking: readonly EffortLevel[];
  /** `thinking.display` when the request names none (Opus 4.7 on: "omitted"). */
  readonly displayDefault: "summarized" | "omitted";
  /** `thinking.display: "updates"` is accepted (Opus 5.5, Sonnet 5.5, Fable 5.x; beta). */
  readonly displayUpdates: boolean;
  /** `role: "system"` messages inside `messages` (Opus 4.8 and later models). */
  readonly systemMessages: boolean;
  /** A trailing assistant message (prefill) is accepted (models before 4.6). */
  readonly prefill: boolean;
  /** Thinking of earlier turns stays in the prompt (Opus 4.5+, Sonnet 4.6+). */
  readonly keepsPriorThinking: boolean;
  /** A forced tool_choice is refused under adaptive thinking too (Opus 5.5, Sonnet 5.5, Fable 5.1). */
  readonly refusesForcedToolWithThinking: boolean;
  /** The model's own documentation page. */
  readonly docs: string;
}

const K = 1_000;
const M = 1_000_000;
const ALL_EFFORT: readonly EffortLevel[] = ["low", "medium", "high", "xhigh", "max"];
const PAGE = "https://platform.claude.com/docs/en/models";

type Defaults = Omit<ModelRow, "id" | "aliases" | "displayName" | "line" | "releasedAt" | "docs">;

/** What the 4.5 generation and Opus 4.1 share: manual thinking, prefill, no effort levels above high. */
const GEN_45: Defaults = {
  lifecycle: "legacy",
  deprecatedAt: null,
  retiresAt: null,
  contextWindow: 200 * K,
  maxOutputTokens: 64 * K,
  inputPricePerMTok: 3,
  outputPricePerMTok: 15,
  tokenizer: "classic",
  minCacheableTokens: 1024,
  effort: [],
  thinking: { enabled: true, adaptive: false, disabled: true },
  effortNeedsThinking: [],
  displayDefault: "summarized",
  displayUpdates: false,
  systemMessages: false,
  prefill: true,
  keepsPriorThinking: false,
  refusesForcedToolWithThinking: false,
};

/** The 4.6 generation on: 1M window, 128K output, adaptive thinking, no prefill. */
const GEN_46: Defaults = {
  ...GEN_45,
  contextWindow: M,
  maxOutputTokens: 128 * K,
  effort: ["low", "medium", "high", "max"],
  thinking: { enabled: true, adaptive: true, disabled: true },
  prefill: false,
  keepsPriorThinking: true,
};

/** Opus 4.7 on: adaptive only, the newer tokenizer, xhigh, thinking omitted unless asked. */
const GEN_47: Defaults = {
  ...GEN_46,
  inputPricePerMTok: 5,
  outputPricePerMTok: 25,
  tokenizer: "2026",
  effort: ALL_EFFORT,
  thinking: { enabled: false, adaptive: true, disabled: true },
  displayDefault: "omitted",
};

/** Opus 4.8 on also accept mid-conversation system messages. */
const GEN_48: Defaults = { ...GEN_47, systemMessages: true };

/** The 5.5 generation: "updates" display, forced tools refused under thinking. */
const GEN_55: Defaults = { ...GEN_48, displayUpdates: true, refusesForcedToolWithThinking: true };

/** Fable: thinking always on (disabled refused), $10/$50. */
const FABLE: Defaults = {
  ...GEN_48,
  inputPricePerMTok: 10,
  outputPricePerMTok: 50,
  minCacheableTokens: 512,
  thinking: { enabled: false, adaptive: true, disabled: false },
};

/** Every model, newest line-up first within each family as the models overview orders them. */
export const MODEL_TABLE: readonly ModelRow[] = [
  {
    ...FABLE,
    id: "claude-fable-5-2",
    aliases: [],
    displayName: "Claude Fable 5.2",
    line: "fable",
    releasedAt: "2026-11-09",
    // Price UNCONFIRMED (api doc §7 gives 8/40, and a reseller lists $8 / $40 as Anthropic's list
    // price: https://docs.laozhang.ai/en/announcements/claude-fable-5-2-2026-11); display
    // "updates" as on Fable 5.1.
    inputPricePerMTok: 8,
    outputPricePerMTok: 40,
    displayUpdates: true,
    refusesForcedToolWithThinking: true,
    docs: `${PAGE}/fable-5-2/overview`,
  },
  {
    ...FABLE,
    id: "claude-fable-5-1",
    aliases: [],
    displayName: "Claude Fable 5.1",
    line: "fable",
    // Its overview page: "Released September 1, 2026"; cache reads "cut to a quarter" of Fable
    // 5's ($0.25 / MTok on $10 input).
    releasedAt: "2026-09-01",
    cacheReadMultiplier: 0.025,
    displayUpdates: true,
    refusesForcedToolWithThinking: true,
    docs: `${PAGE}/fable-5-1/overview`,
  },
  {
    ...FABLE,
    id: "claude-fable-5",
    aliases: [],
    displayName: "Claude Fable 5",
    line: "fable",
    releasedAt: "2026-06-09",
    docs: `${PAGE}/fable-5/overview`,
  },
  {
    ...GEN_55,
    id: "claude-opus-5-5",
    aliases: [],
    displayName: "Claude Opus 5.5",
    line: "opus",
    releasedAt: "2026-09-24",
    inputPricePerMTok: 4,
    outputPricePerMTok: 20,
    // Its overview page: cache read $0.20 / MTok on $4 input.
    cacheReadMultiplier: 0.05,
    // UNCONFIRMED: the caching page names Opus 5 at 512; Opus 5.5 is taken to keep it.
    minCacheableTokens: 512,
    docs: `${PAGE}/opus-5-5/overview`,
  },
  {
    ...GEN_48,
    id: "claude-opus-5",
    aliases: [],
    displayName: "Claude Opus 5",
    line: "opus",
    releasedAt: "2026-07-24",
    minCacheableTokens: 512,
    // Opus 5 refuses thinking disabled at xhigh and max (its model page, R-D1; the 400's
    // wording is the API's, quoted in anthropics/claude-code#81084: validate-model-rules.ts).
    effortNeedsThinking: ["xhigh", "max"],
    docs: `${PAGE}/opus-5/overview`,
  },
  {
    ...GEN_48,
    id: "claude-opus-4-8",
    aliases: [],
    displayName: "Claude Opus 4.8",
    line: "opus",
    releasedAt: "2026-05-28",
    minCacheableTokens: 1024,
    docs: `${PAGE}/opus-4-8/overview`,
  },
  {
    ...GEN_47,
    id: "claude-opus-4-7",
    aliases: [],
    displayName: "Claude Opus 4.7",
    line: "opus",
    releasedAt: "2026-04-16",
    minCacheableTokens: 2048,
    docs: `${PAGE}/opus-4-7/overview`,
  },
  {
    ...GEN_46,
    id: "claude-opus-4-6",
    aliases: [],
    displayName: "Claude Opus 4.6",
    line: "opus",
    releasedAt: "2026-02-05",
    inputPricePerMTok: 5,
    outputPricePerMTok: 25,
    minCacheableTokens: 4096,
    docs: `${PAGE}/opus-4-6/overview`,
  },
  {
    ...GEN_45,
    id: "claude-opus-4-5-20251101",
    aliases: ["claude-opus-4-5"],
    displayName: "Claude Opus 4.5",
    line: "opus",
    releasedAt: "2025-11-24",
    // Deprecated 2026-11-23, retiring 2027-01-22 (model deprecations page).
    lifecycle: "deprecated",
    deprecatedAt: "2026-11-23",
    retiresAt: "2027-01-22",
    inputPricePerMTok: 5,
    outputPricePerMTok: 25,
    minCacheableTokens: 4096,
    effort: ["low", "medium", "high"],
    keepsPriorThinking: true,
    docs: `${PAGE}/opus-4-5/overview`,
  },
  {
    ...GEN_45,
    id: "claude-opus-4-1-20250805",
    aliases: ["claude-opus-4-1"],
    displayName: "Claude Opus 4.1",
    line: "opus",
    releasedAt: "2025-08-05",
    lifecycle: "retired",
    deprecatedAt: "2026-06-05",
    retiresAt: "2026-08-05",
    maxOutputTokens: 32 * K,
    inputPricePerMTok: 15,
    outputPricePerMTok: 75,
    docs: "https://platform.claude.com/docs/en/about-claude/model-deprecations",
  },
  {
    ...GEN_55,
    id: "claude-sonnet-5-5",
    aliases: [],
    displayName: "Claude Sonnet 5.5",
    line: "sonnet",
    releasedAt: "2026-09-24",
    inputPricePerMTok: 2,
    outputPricePerMTok: 10,
    // UNCONFIRMED: Sonnet 5's 1024 kept.
    minCacheableTokens: 1024,
    docs: `${PAGE}/sonnet-5-5/overview`,
  },
  {
    ...GEN_48,
    id: "claude-sonnet-5",
    aliases: [],
    displayName: "Claude Sonnet 5",
    line: "sonnet",
    releasedAt: "2026-06-30",
    inputPricePerMTok: 2,
    outputPricePerMTok: 10,
    minCacheableTokens: 1024,
    docs: `${PAGE}/sonnet-5/overview`,
  },
  {
    ...GEN_46,
    id: "claude-sonnet-4-6",
    aliases: [],
    displayName: "Claude Sonnet 4.6",
    line: "sonnet",
    releasedAt: "2026-02-17",
    minCacheableTokens: 1024,
    docs: `${PAGE}/sonnet-4-6/overview`,
  },
  {
    ...GEN_45,
    id: "claude-sonnet-4-5-20250929",
    aliases: ["claude-sonnet-4-5"],
    displayName: "Claude Sonnet 4.5",
    line: "sonnet",
    releasedAt: "2025-09-29",
    lifecycle: "retired",
    deprecatedAt: "2026-09-30",
    retiresAt: "2026-11-30",
    docs: "https://platform.claude.com/docs/en/about-claude/model-deprecations",
  },
  {
    ...GEN_55,
    id: "claude-haiku-5-5",
    aliases: [],
    displayName: "Claude Haiku 5.5",
    line: "haiku",
    releasedAt: "2026-10-07",
    // Its overview page: $0.10 / $0.50 for prompts up to 100,000 tokens, $0.50 / $2.50 over, and
    // "the same newer tokenizer as Claude 4.7 and later models". UNCONFIRMED: the 1024 minimum, no
    // "updates" display.
    inputPricePerMTok: 0.1,
    outputPricePerMTok: 0.5,
    priceTiers: [{ abovePromptTokens: 100 * K, inputPricePerMTok: 0.5, outputPricePerMTok: 2.5 }],
    tokenizer: "2026",
    minCacheableTokens: 1024,
    displayUpdates: false,
    refusesForcedToolWithThinking: false,
    docs: `${PAGE}/haiku-5-5/overview`,
  },
  {
    ...GEN_45,
    id: "claude-haiku-4-5-20251001",
    aliases: ["claude-haiku-4-5"],
    displayName: "Claude Haiku 4.5",
    line: "haiku",
    releasedAt: "2025-10-15",
    inputPricePerMTok: 1,
    outputPricePerMTok: 5,
    minCacheableTokens: 4096,
    docs: `${PAGE}/haiku-4-5/overview`,
  },
];

/** Tokens per simulator-tokenizer token for each tokenizer family. */
export const TOKENIZER_FACTOR: Readonly<Record<ModelRow["tokenizer"], number>> = {
  classic: 1,
  "2026": 1.3,
};

/** A cache read's share of the input price where the row names none (pricing page). */
export const CACHE_READ_MULTIPLIER = 0.1;

/**
 * The input and output prices of one request whose prompt is `promptTokens` long: the highest band
 * the prompt is over, else the base prices ("up to 100,000 tokens" is the base band).
 */
export function pricesForPrompt(
  prices: Pick<ModelRow, "inputPricePerMTok" | "outputPricePerMTok" | "priceTiers">,
  promptTokens: number,
): { readonly inputPricePerMTok: number; readonly outputPricePerMTok: number } {
  let chosen: { readonly inputPricePerMTok: number; readonly outputPricePerMTok: number } = prices;
  let floor = -1;
  for (const tier of prices.priceTiers ?? []) {
    if (promptTokens > tier.abovePromptTokens && tier.abovePromptTokens > floor) {
      chosen = tier;
      floor = tier.abovePromptTokens;
    }
  }
  return { inputPricePerMTok: chosen.inputPricePerMTok, outputPricePerMTok: chosen.outputPricePerMTok };
}

/** Batch requests cost half the standard price, input and output (pricing page). */
export const BATCH_DISCOUNT = 0.5;
