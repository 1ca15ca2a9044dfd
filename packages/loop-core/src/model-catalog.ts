/**
 * What the client knows about each model: window, output cap and prices (api doc §7). The loop
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
}

const M = 1_000_000;
const K = 1_000;

const CATALOG: readonly (ModelInfo & { readonly aliases?: readonly string[] })[] = [
  {
    id: "claude-haiku-4-5-20251001",
    aliases: ["claude-haiku-4-5"],
    contextWindow: 200 * K,
    maxOutputTokens: 64 * K,
    inputPricePerMTok: 1,
    outputPricePerMTok: 5,
  },
  {
    id: "claude-sonnet-4-5-20250929",
    aliases: ["claude-sonnet-4-5"],
    contextWindow: 200 * K,
    maxOutputTokens: 64 * K,
    inputPricePerMTok: 3,
    outputPricePerMTok: 15,
  },
  {
    id: "claude-opus-4-5-20251101",
    aliases: ["claude-opus-4-5"],
    contextWindow: 200 * K,
    maxOutputTokens: 64 * K,
    inputPricePerMTok: 5,
    outputPricePerMTok: 25,
  },
  {
    id: "claude-opus-4-1-20250805",
    aliases: ["claude-opus-4-1"],
    contextWindow: 200 * K,
    maxOutputTokens: 32 * K,
    inputPricePerMTok: 15,
    outputPricePerMTok: 75,
  },
  {
    id: "claude-sonnet-4-6",
    contextWindow: M,
    maxOutputTokens: 128 * K,
    inputPricePerMTok: 3,
    outputPricePerMTok: 15,
  },
  {
    id: "claude-opus-4-6",
    contextWindow: M,
    maxOutputTokens: 128 * K,
    inputPricePerMTok: 5,
    outputPricePerMTok: 25,
  },
  {
    id: "claude-opus-4-7",
    contextWindow: M,
    maxOutputTokens: 128 * K,
    inputPricePerMTok: 5,
    outputPricePerMTok: 25,
  },
  {
    id: "claude-opus-4-8",
    contextWindow: M,
    maxOutputTokens: 128 * K,
    inputPricePerMTok: 5,
    outputPricePerMTok: 25,
  },
  {
    id: "claude-sonnet-5",
    contextWindow: M,
    maxOutputTokens: 128 * K,
    inputPricePerMTok: 2,
    outputPricePerMTok: 10,
  },
  {
    id: "claude-opus-5",
    contextWindow: M,
    maxOutputTokens: 128 * K,
    inputPricePerMTok: 5,
    outputPricePerMTok: 25,
  },
  {
    id: "claude-opus-5-5",
    contextWindow: M,
    maxOutputTokens: 128 * K,
    inputPricePerMTok: 4,
    outputPricePerMTok: 20,
  },
  {
    id: "claude-sonnet-5-5",
    contextWindow: M,
    maxOutputTokens: 128 * K,
    inputPricePerMTok: 2,
    outputPricePerMTok: 10,
  },
  {
    id: "claude-haiku-5-5",
    contextWindow: M,
    maxOutputTokens: 128 * K,
    inputPricePerMTok: 0.1,
    outputPricePerMTok: 0.5,
  },
];

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
const FAMILY_ALIASES = ["opus", "sonnet", "haiku"] as const;

/**
 * The model id to send for what a user typed: Claude Code's aliases (`opus`, `sonnet`, `haiku`,
 * the newest of each family — the catalog lists each family oldest first) and its `[1m]` suffix
 * (the 1M-token window, which the catalog's window for the model already says) resolve through
 * the catalog; any other name is sent as it is.
 */
export function resolveModelAlias(model: string): string {
  const name = model.endsWith("[1m]") ? model.slice(0, -"[1m]".length) : model;
  const family = FAMILY_ALIASES.find((alias) => alias === name.toLowerCase());
  if (family === undefined) return name;
  const members = CATALOG.filter((info) => info.id.startsWith(`claude-${family}-`));
  return members[members.length - 1]?.id ?? name;
}

/** Resolves a model id or alias; `overrides` (e.g. a tiny test window) win over the catalog. */
export function getModelInfo(model: string, overrides: readonly ModelInfo[] = []): ModelInfo {
  const override = overrides.find((info) => info.id === model);
  if (override) return override;
  const known = CATALOG.find((info) => info.id === model || info.aliases?.includes(model));
  if (known) return { ...known, id: model };
  return { id: model, ...UNKNOWN_MODEL };
}

/** Cost in USD of one usage record: writes 5m ×1.25, 1h ×2, reads ×0.1 of the input price. */
export function costUsd(
  info: ModelInfo,
  usage: {
    readonly input_tokens: number;
    readonly output_tokens: number;
    readonly cache_creation_input_tokens?: number | null;
    readonly cache_read_input_tokens?: number | null;
    readonly cache_creation?: { readonly ephemeral_1h_input_tokens?: number } | null;
  },
): number {
  const write = usage.cache_creation_input_tokens ?? 0;
  const write1h = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  const inputUnits =
    usage.input_tokens + (write - write1h) * 1.25 + write1h * 2 + (usage.cache_read_input_tokens ?? 0) * 0.1;
  return (inputUnits * info.inputPricePerMTok + usage.output_tokens * info.outputPricePerMTok) / M;
}
