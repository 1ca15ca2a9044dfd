/**
 * `@forkloop/batch/testing`: fixtures for tests of batch backends, journals and applies, in the
 * test suites and in the racer processes the chaos tests spawn from the built packages. Not API.
 */
import type { ItemResult } from "../job-backend.js";

/** A finished item's result: one turn, one request of one token each way, nothing spent. */
export function itemResult(text = "done"): ItemResult {
  return {
    turns: 1,
    usage: {
      inputTokens: 1,
      outputTokens: 1,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
      apiCalls: 1,
    },
    costUsd: 0,
    durationMs: 1,
    terminal: "completed",
    text,
  };
}
