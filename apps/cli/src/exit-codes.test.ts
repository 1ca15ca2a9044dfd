import { TERMINAL_REASONS } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { EXIT, exitCodeForBatch, exitCodeForTerminal } from "./exit-codes.js";

describe("exit codes (documented in apps/cli/README.md)", () => {
  it("R-L6: every terminal reason maps to its documented code", () => {
    const table = Object.fromEntries(TERMINAL_REASONS.map((reason) => [reason, exitCodeForTerminal(reason)]));
    expect(table).toEqual({
      completed: 0,
      max_turns: 3,
      model_error: 4,
      image_error: 4,
      hook_stopped: 5,
      stop_hook_prevented: 5,
      prompt_too_long: 8,
      blocking_limit: 8,
      aborted_streaming: 130,
      aborted_tools: 130,
    });
  });

  it.each([
    [{ succeeded: 3, failed: 0, pending: 0 }, EXIT.ok],
    [{ succeeded: 2, failed: 1, pending: 0 }, EXIT.batchPartial],
    [{ succeeded: 2, failed: 0, pending: 1 }, EXIT.batchPartial],
    [{ succeeded: 0, failed: 3, pending: 0 }, EXIT.batchFailed],
  ])("batch %o → %d (0 only when every item succeeded)", (counts, code) => {
    expect(exitCodeForBatch(counts)).toBe(code);
  });
});
