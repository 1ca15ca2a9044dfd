import { type ContextEditingConfig, type ModelInfo, thresholdsFor } from "@forkloop/loop-core";

/** Microcompact's defaults (R-C2), which the API edit mirrors. */
export const MICROCOMPACT_TRIGGER_RATIO = 0.6;
export const MICROCOMPACT_KEEP_RECENT = 5;
export const MICROCOMPACT_CLEAR_AT_LEAST_SHARE = 0.1;

/**
 * R-C2, cached variant (opt-in, `--context-editing`): the microcompact stage done by the API.
 * The `clear_tool_uses` edit gets the client stage's lines — from 60% of the model's auto-compact
 * line, the newest 5 results kept, only when it frees ≥ 10% of the line — so turning it on moves
 * the stage to the server without changing when it fires. The pipeline then skips its own
 * microcompact (`clientMicrocompact: false`).
 */
export function apiMicrocompactEdits(model: ModelInfo, autoCompactWindow?: number): ContextEditingConfig {
  const line = thresholdsFor(model, autoCompactWindow).autoCompact;
  return {
    clearToolUses: {
      trigger: { type: "input_tokens", value: Math.floor(line * MICROCOMPACT_TRIGGER_RATIO) },
      keep: MICROCOMPACT_KEEP_RECENT,
      clearAtLeast: Math.floor(line * MICROCOMPACT_CLEAR_AT_LEAST_SHARE),
    },
  };
}
