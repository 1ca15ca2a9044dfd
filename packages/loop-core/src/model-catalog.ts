import type { ThinkingConfigParam } from "./build-request.js";
import {
  BATCH_DISCOUNT,
  CACHE_READ_MULTIPLIER,
  type EffortLevel,
  MODEL_TABLE,
  type ModelRow,
  type PriceTier,
  pricesForPrompt,
} from "./model-table.js";

/**
 * What the client knows about each model: window, output cap and prices (the model table). The loop
 * needs windows for its limits (R-C7) and prices for cost; unknown ids fall back to a
 * conservative default so a new model id never breaks a run.
 */
export interface ModelInfo {
  readonly id: string;
  readonly contextWindow: number;
  readonly maxOutputTokens: number;
  /** USD per million input / output tokens. */
  readonly inputPricePerMTok: number;
  readonly outputPricePerMTok: number;
  /** Prompt-length price bands above those prices (Haiku 5.5); absent = one price at any length. */
  readonly priceTiers?: readonly PriceTier[];
  /** A cache read's share of the input price (default 0.1; Opus 5.5 0.05, Fable 5.1 0.025). */
  readonly cacheReadMultiplier?: number;
}

const M = 1_000_000;
/** R-T6: web search is billed per search, $10 per 1 000 (pricing page), on top of the tokens. */
const WEB_SEARCH_PRICE_USD = 0.01;
const K = 1_000;

/**
 * The catalog is the model table (R-D1, `model-table.ts`, shared with the simulator) less the
 * retired models: the API answers those with 404, so no default, alias or picker offers them.
 */
const CATALOG: readonly (ModelInfo & { readonly aliases?: readonly string[] })[] = MODEL_TABLE.filter(
  (row) => row.lifecycle !== "retired",
).map((row) => ({
  id: row.id,
  ...(row.aliases.length > 0 ? { aliases: row.aliases } : {}),
  contextWindow: row.contextWindow,
  maxOutputTokens: row.maxOutputTokens,
  inputPricePerMTok: row.inputPricePerMTok,
  outputPricePerMTok: row.outputPricePerMTok,
  ...(row.priceTiers ? { priceTiers: row.priceTiers } : {}),
  ...(row.cacheReadMultiplier === undefined ? {} : { cacheReadMultiplier: row.cacheReadMultiplier }),
}));

/**
 * The catalog's answer for each id or alias asked (at most one entry per id and alias): the loop
 * asks on every model call, and a search of the catalog and a copy each time showed in its CPU.
 */
const catalogInfo = new Map<string, ModelInfo>();

/** The table's row for each id or alias asked that has one (every request asks, R-X1, R-X2). */
const tableRows = new Map<string, ModelRow>();

/** Used for ids the catalog does not know: the smallest window, so limits stay safe. */
const UNKNOWN_MODEL: Omit<ModelInfo, "id"> = {
  contextWindow: 200 * K,
  maxOutputTokens: 32 * K,
  inputPricePerMTok: 3,
  outputPricePerMTok: 15,
};

/** The catalog's models (without overrides), e.g. for a model picker. */
export function listModels(): (ModelInfo & { readonly aliases?: readonly string[] })[] {
  return CATALOG.map((info) => ({ ...info }));
}

/** Claude Code's family aliases: each names the newest model of its family in the catalog. */
const FAMILY_ALIASES = ["opus", "sonnet", "haiku", "fable"] as const;

/** Claude Code's variables naming the model an alias stands for (model configuration page). */
const FAMILY_MODEL_VARIABLES: Readonly<Record<string, string>> = {
  opus: "ANTHROPIC_DEFAULT_OPUS_MODEL",
  sonnet: "ANTHROPIC_DEFAULT_SONNET_MODEL",
  haiku: "ANTHROPIC_DEFAULT_HAIKU_MODEL",
};

/** The environment an alias is resolved in: the run's (`query()`'s `env`, the CLI's process env). */
export type ModelAliasEnv = Readonly<Record<string, string | undefined>>;

/**
 * The model id to send for what a user typed: Claude Code's aliases (`opus`, `sonnet`, `haiku`, `fable`,
 * the newest of each family — the table lists each family newest first) and its `[1m]` suffix
 * (the 1M-token window, which the catalog's window for the model already says) resolve through
 * the catalog; any other name is sent as it is. R-X2: as in Claude Code, `env`'s
 * `ANTHROPIC_DEFAULT_{OPUS,SONNET,HAIKU}_MODEL` name the model of their alias instead — every
 * place an alias is read (the model, fallbacks, agent definitions, an Agent call's `model`, a
 * batch's) resolves it here, with the run's environment.
 */
export function resolveModelAlias(model: string, env: ModelAliasEnv = {}): string {
  const name = model.endsWith("[1m]") ? model.slice(0, -"[1m]".length) : model;
  const family = FAMILY_ALIASES.find((alias) => alias === name.toLowerCase());
  if (family === undefined) return name;
  const variable = FAMILY_MODEL_VARIABLES[family];
  const pinned = variable === undefined ? undefined : env[variable]?.trim();
  if (pinned !== undefined && pinned !== "") return pinned;
  return CATALOG.find((info) => info.id.startsWith(`claude-${family}-`))?.id ?? name;
}

/** Resolves a model id or alias; `overrides` (e.g. a tiny test window) win over the catalog. */
export function getModelInfo(model: string, overrides: readonly ModelInfo[] = []): ModelInfo {
  const override = overrides.find((info) => info.id === model);
  if (override) return override;
  let known = catalogInfo.get(model);
  if (known === undefined) {
    const row = CATALOG.find((info) => info.id === model || info.aliases?.includes(model));
    if (row === undefined) return { id: model, ...UNKNOWN_MODEL };
    known = Object.freeze({ ...row, id: model });
    catalogInfo.set(model, known);
  }
  return known;
}

/**
 * Cost in USD of one usage record: writes 5m ×1.25, 1h ×2, reads ×0.1 of the input price (the
 * model's own share where the table names one: Opus 5.5 0.05, Fable 5.1 0.025). A
 * Message Batches answer (`service_tier: "batch"`) costs half of all of it (R-B9; batch processing
 * page: "All usage is charged at 50% of the standard API prices"). A model priced by prompt length
 * (Haiku 5.5) takes the band of this request's prompt: input, cache writes and reads together.
 */
export function costUsd(
  info: ModelInfo,
  usage: {
    readonly input_tokens: number;
    readonly output_tokens: number;
    readonly cache_creation_input_tokens?: number | null;
    readonly cache_read_input_tokens?: number | null;
    readonly cache_creation?: { readonly ephemeral_1h_input_tokens?: number } | null;
    readonly service_tier?: string | null;
    readonly server_tool_use?: { readonly web_search_requests?: number | null } | null;
  },
): number {
  const write = usage.cache_creation_input_tokens ?? 0;
  const write1h = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  const read = usage.cache_read_input_tokens ?? 0;
  const prices = pricesForPrompt(info, usage.input_tokens + write + read);
  const readShare = info.cacheReadMultiplier ?? CACHE_READ_MULTIPLIER;
  const inputUnits = usage.input_tokens + (write - write1h) * 1.25 + write1h * 2 + read * readShare;
  const standard =
    (inputUnits * prices.inputPricePerMTok + usage.output_tokens * prices.outputPricePerMTok) / M;
  const tokens = usage.service_tier === "batch" ? standard * BATCH_DISCOUNT : standard;
  return tokens + (usage.server_tool_use?.web_search_requests ?? 0) * WEB_SEARCH_PRICE_USD;
}

/**
 * R-L17, R-X2: thinking as `model` takes it. A session's thinking follows it onto a fallback
 * model or one `setModel` picks, which may take another kind (model table: adaptive thinking from
 * the 4.6 generation on, only adaptive from Opus 4.7, Haiku 4.5 only a budget): adaptive becomes
 * a budget of the output cap but one, a budget becomes adaptive, and a model that takes neither
 * gets none. Unknown ids get it as asked.
 */
export function thinkingForModel(
  model: string,
  thinking: ThinkingConfigParam | undefined,
  maxTokens: number,
): ThinkingConfigParam | undefined {
  if (thinking === undefined || thinking.type === "disabled") return thinking;
  const row = tableRow(model);
  if (row === undefined) return thinking;
  const display = "display" in thinking && thinking.display != null ? { display: thinking.display } : {};
  if (thinking.type === "adaptive" && !row.thinking.adaptive) {
    if (!row.thinking.enabled || maxTokens - 1 < MIN_THINKING_BUDGET) return undefined;
    return { type: "enabled", budget_tokens: maxTokens - 1, ...display };
  }
  if (thinking.type === "enabled" && !row.thinking.enabled) {
    return row.thinking.adaptive ? { type: "adaptive", ...display } : undefined;
  }
  return thinking;
}

/**
 * Whether `model` takes mid-conversation `role: "system"` messages (model table: from the 4.8
 * generation on). Unknown ids are sent none: a user turn's text works everywhere.
 */
export function takesSystemMessages(model: string): boolean {
  return tableRow(model)?.systemMessages === true;
}

/** The API's smallest thinking budget. */
const MIN_THINKING_BUDGET = 1024;

function tableRow(model: string): ModelRow | undefined {
  const known = tableRows.get(model);
  if (known !== undefined) return known;
  const name = model.endsWith("[1m]") ? model.slice(0, -"[1m]".length) : model;
  const row = MODEL_TABLE.find((r) => r.id === name || r.aliases.includes(name));
  if (row !== undefined) tableRows.set(model, row);
  return row;
}

const EFFORT_ORDER: readonly EffortLevel[] = ["low", "medium", "high", "xhigh", "max"];

/**
 * The `output_config.effort` to send `model` for the level asked (R-D2): the API refuses a level
 * the model does not take (effort page: no effort on Haiku 4.5, no `xhigh` on the 4.6 models, no
 * `max` on Opus 4.5; on Opus 5 `xhigh`/`max` need thinking), so a level the model lacks becomes
 * the highest one it takes below it, and none when it takes none (the API default). Unknown ids
 * get the level as asked.
 */
export function effortForModel(
  model: string,
  effort: EffortLevel,
  thinkingOff = false,
): EffortLevel | undefined {
  const row = tableRow(model);
  if (row === undefined) return effort;
  const allowed = (level: EffortLevel) =>
    row.effort.includes(level) && !(thinkingOff && row.effortNeedsThinking.includes(level));
  for (let i = EFFORT_ORDER.indexOf(effort); i >= 0; i--) {
    const level = EFFORT_ORDER[i];
    if (level !== undefined && allowed(level)) return level;
  }
  return undefined;
}
