import type { ContextPipeline, ContextStageInput, ContextStageResult } from "./context-pipeline.js";
import { MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES, thresholdsFor } from "./context-thresholds.js";
import type { HistoryReplacedEvent } from "./loop-events.js";
import type { QueryConfig } from "./loop-state.js";
import type { Message, SystemMessage } from "./messages.js";
import { getModelInfo } from "./model-catalog.js";
import type { QueryDeps } from "./query-deps.js";
import { tokenCountWithEstimation } from "./token-estimation.js";

/**
 * Phase 3 of an iteration (§4), in the documented order: budget + snip → microcompact → collapse
 * → autocompact. Collapse runs before autocompact so that autocompact is a no-op when collapse
 * sufficed. Yields each stage's boundary markers, then `history_replaced` when a stage changed the
 * history; returns the messages to send.
 */
export async function* manageContext(
  pipeline: ContextPipeline,
  deps: Pick<QueryDeps, "microcompact" | "autocompact">,
  config: Pick<QueryConfig, "autoCompactEnabled">,
  input: ContextStageInput,
): AsyncGenerator<SystemMessage | HistoryReplacedEvent, ContextStageResult> {
  const next = (stage: ContextStageResult): ContextStageInput => ({
    ...input,
    messages: stage.messages,
    tracking: stage.tracking,
  });
  // Each stage's markers are yielded one by one, not with `yield*`: most stages have none, and a
  // delegation to an empty array still costs an iterator and a wait (every iteration, 4 times).
  let stage = pipeline.budgetAndSnip(input);
  for (const boundary of stage.boundaries) yield boundary;
  stage = await deps.microcompact(next(stage));
  for (const boundary of stage.boundaries) yield boundary;
  stage = await pipeline.collapse(next(stage));
  for (const boundary of stage.boundaries) yield boundary;
  // R-C4/R-L11 circuit breaker: after 3 consecutive failures autocompact is not tried again in
  // this run — a permanently failing compact must not cost an API call on every turn.
  if (
    config.autoCompactEnabled &&
    stage.tracking.consecutiveFailures < MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES
  ) {
    stage = await deps.autocompact(next(stage));
    for (const boundary of stage.boundaries) yield boundary;
  }
  if (stage.messages !== input.messages) yield historyReplaced(stage.messages);
  return stage;
}

export function historyReplaced(messages: readonly Message[]): HistoryReplacedEvent {
  return { type: "history_replaced", messages };
}

/**
 * R-C8: the pipeline's own count when it has one (it knows what its stages just removed), else
 * `tokenCountWithEstimation`. With API context editing on (R-C2 cached variant) the last
 * response's usage wins: only the API knows what it cleared, and its usage already counts the
 * edited prompt, while a client-side count would still see every cleared tool result.
 */
export function contextTokens(
  pipeline: ContextPipeline,
  messages: readonly Message[],
  config: Pick<QueryConfig, "contextEditing"> = {},
): number {
  if (config.contextEditing) return tokenCountWithEstimation(messages);
  return pipeline.tokenCount ? pipeline.tokenCount(messages) : tokenCountWithEstimation(messages);
}

/**
 * R-C7 hard limit: with auto-compact off nothing will shrink the context, so the loop stops
 * before the API rejects the request. A `compact` request is exempt (R-L3): it is what reduces
 * the tokens. Returns the error to surface, or undefined when the request may go.
 */
export function blockingLimitError(
  pipeline: ContextPipeline,
  messages: readonly Message[],
  model: string,
  config: Pick<
    QueryConfig,
    "autoCompactEnabled" | "autoCompactWindow" | "querySource" | "modelOverrides" | "contextEditing"
  >,
): { readonly status: null; readonly type: string; readonly message: string } | undefined {
  if (config.autoCompactEnabled || config.querySource === "compact") return undefined;
  const limit = thresholdsFor(
    getModelInfo(model, config.modelOverrides),
    config.autoCompactWindow,
  ).blockingLimit;
  const tokens = contextTokens(pipeline, messages, config);
  if (tokens < limit) return undefined;
  return {
    status: null,
    type: "blocking_limit",
    message: `Context is at its hard limit (${tokens} of ${limit} tokens) and auto-compact is off; compact the conversation to continue`,
  };
}
