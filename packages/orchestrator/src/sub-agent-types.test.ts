import { TERMINAL_REASONS } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { EMPTY_USAGE, subAgentResultSchema } from "./sub-agent-types.js";

const result = {
  agentId: "a1",
  status: "completed",
  text: "",
  turns: 1,
  usage: EMPTY_USAGE,
  costUsd: 0,
  durationMs: 1,
};

describe("sub-agent results crossing the thread", () => {
  it("R-F2: every terminal reason of loop-core is accepted (the enum is built from TERMINAL_REASONS), others are not", () => {
    for (const terminal of TERMINAL_REASONS) {
      expect(subAgentResultSchema.safeParse({ ...result, terminal }).success, terminal).toBe(true);
    }
    expect(subAgentResultSchema.safeParse({ ...result, terminal: "not_a_reason" }).success).toBe(false);
  });
});
