import {
  type CacheSafeParams,
  costUsd,
  estimateTextTokens,
  getModelInfo,
  type ModelInfo,
} from "@forkloop/loop-core";
import { describeSkipped, type LoadedItems } from "./batch-items.js";
import { formatCount } from "./progress-display.js";

/**
 * `forkloop batch --dry-run`: what the batch would send first, from the prompt
 * sizes alone. Every item's first request is the shared prefix plus the item's prompt; the
 * prefix is written to the cache once and read by every other item (R-F4), so that is how it is
 * priced. Later turns (tool results, answers) depend on the model and are not counted: the
 * figure is a floor, and says so.
 */
export interface DryRunEstimate {
  readonly model: string;
  readonly items: readonly string[];
  readonly skipped: string | null;
  /** Tokens of tools + system, shared by every item. */
  readonly prefixTokens: number;
  /** Tokens of all the items' prompts together. */
  readonly promptTokens: number;
  /** The first requests of every item: one prefix write, n − 1 prefix reads, the prompts. */
  readonly firstRequestsCostUsd: number;
  /**
   * R-B7 `--reduce`: its first request after the items — the prefix read from the cache and the
   * reduce prompt (the items' answers it also reads are not known yet, so not counted).
   */
  readonly reduce?: { readonly promptTokens: number; readonly firstRequestCostUsd: number };
}

export function estimateDryRun(
  loaded: LoadedItems,
  prefix: CacheSafeParams,
  modelOverrides: readonly ModelInfo[],
  reducePrompt?: string,
): DryRunEstimate {
  const prefixTokens = estimateTextTokens(
    JSON.stringify({ system: prefix.systemPrompt, tools: prefix.tools }),
  );
  const promptTokens = loaded.items.reduce((sum, item) => sum + estimateTextTokens(item.prompt), 0);
  const count = loaded.items.length;
  const firstRequestsCostUsd = costUsd(getModelInfo(prefix.model, modelOverrides), {
    input_tokens: promptTokens,
    output_tokens: 0,
    cache_creation_input_tokens: prefixTokens,
    cache_read_input_tokens: prefixTokens * Math.max(0, count - 1),
  });
  const reducePromptTokens = reducePrompt === undefined ? 0 : estimateTextTokens(reducePrompt);
  const reduce =
    reducePrompt === undefined
      ? undefined
      : {
          promptTokens: reducePromptTokens,
          firstRequestCostUsd: costUsd(getModelInfo(prefix.model, modelOverrides), {
            input_tokens: reducePromptTokens,
            output_tokens: 0,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: prefixTokens,
          }),
        };
  return {
    model: prefix.model,
    items: loaded.items.map((item) => item.label),
    skipped: loaded.skipped.length > 0 ? describeSkipped(loaded.skipped) : null,
    prefixTokens,
    promptTokens,
    firstRequestsCostUsd,
    ...(reduce === undefined ? {} : { reduce }),
  };
}

const LISTED = 20;

export function formatDryRun(estimate: DryRunEstimate): string {
  const count = estimate.items.length;
  const listed = estimate.items.slice(0, LISTED).map((label) => `  ${label}`);
  return [
    `dry run: ${count} ${count === 1 ? "item" : "items"}${estimate.skipped === null ? "" : ` (${estimate.skipped})`}`,
    ...listed,
    ...(count > LISTED ? [`  … and ${count - LISTED} more`] : []),
    `first requests: a ${formatCount(estimate.prefixTokens)}-token shared prefix (written once, read by the other ${Math.max(0, count - 1)}) + ${formatCount(estimate.promptTokens)} prompt tokens`,
    ...(estimate.reduce === undefined
      ? []
      : [
          `then the reduce: one request reading the prefix + ${formatCount(estimate.reduce.promptTokens)} prompt tokens + the items' answers (not known yet), at least $${estimate.reduce.firstRequestCostUsd.toFixed(4)}`,
        ]),
    `estimated cost of the first requests: at least $${(estimate.firstRequestsCostUsd + (estimate.reduce?.firstRequestCostUsd ?? 0)).toFixed(4)} at ${estimate.model}'s prices; later turns and output are not counted`,
    "nothing was sent; run it without --dry-run",
  ].join("\n");
}
