import type { CompactionPipeline } from "@forkloop/compaction";
import {
  type CacheSafeParams,
  costUsd,
  getModelInfo,
  type Message,
  type ModelInfo,
  type Tool,
  type Usage,
  usageTotalsOf,
} from "@forkloop/loop-core";
import type { SessionCompactResult } from "./main-session-types.js";
import type { TranscriptWriter } from "./transcript.js";

/** A `/compact` that did not run (or failed): the history is unchanged; what it spent is counted. */
export function compactFailure(
  error: string,
  modelInfo: ModelInfo,
  spent: readonly Usage[] = [],
): SessionCompactResult {
  return {
    ok: false,
    error,
    usage: usageTotalsOf(spent),
    costUsd: spent.reduce((sum, usage) => sum + costUsd(modelInfo, usage), 0),
  };
}

/**
 * Manual compaction (`/compact [instructions]`) through the pipeline's own manual path: the
 * latest request's exact prefix + one instruction (R-F3). On success the transcript records the
 * boundary and the whole new history, so a resume restarts from it; the next request announces
 * the prefix that follows.
 */
export async function manualCompact(input: {
  readonly pipeline: CompactionPipeline;
  readonly transcript: TranscriptWriter;
  readonly sessionId: string;
  readonly tools: readonly Tool[];
  readonly history: readonly Message[];
  readonly params: CacheSafeParams | undefined;
  readonly model: string;
  readonly modelOverrides: Parameters<typeof getModelInfo>[1];
  readonly instructions: string | undefined;
  readonly signal: AbortSignal | undefined;
}): Promise<{ result: SessionCompactResult; history?: Message[] }> {
  const { params, transcript } = input;
  const modelInfo = getModelInfo(input.model, input.modelOverrides);
  const text = input.instructions?.trim() ?? "";
  const outcome = await input.pipeline.compactNow({
    messages: input.history,
    model: input.model,
    querySource: "sdk",
    tools: input.tools,
    tracking: { compacted: false, turnCounter: 0, turnId: input.sessionId, consecutiveFailures: 0 },
    cacheSafeParams: params,
    signal: input.signal ?? new AbortController().signal,
    ...(text === "" ? {} : { instructions: text }),
  });
  if (!outcome.ok) return { result: compactFailure(outcome.error, modelInfo, outcome.usage) };
  const history = [...outcome.messages];
  transcript.append({ type: "message", message: outcome.boundary });
  transcript.append({ type: "history", messages: history });
  return {
    history,
    result: {
      ok: true,
      boundary: outcome.boundary,
      preTokens: outcome.preTokens,
      postTokens: outcome.postTokens,
      source: outcome.source,
      usage: usageTotalsOf(outcome.usage),
      costUsd: outcome.usage.reduce((sum, usage) => sum + costUsd(modelInfo, usage), 0),
    },
  };
}
