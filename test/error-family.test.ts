import { ForkloopError } from "@forkloop/loop-core/errors";
import { OrchestratorError } from "@forkloop/orchestrator";
import { OptionsError } from "@forkloop/sdk/errors";
import { LockHeldError } from "@forkloop/sdk/owner-lock";
import { describe, expect, it } from "vitest";
import { CliError } from "../apps/cli/src/cli-error.js";

describe("R-A7: one error family", () => {
  it("the errors a user can fix and the orchestrator's faults are ForkloopErrors with a code and data", () => {
    const errors = [
      new OptionsError("bad settings: fix it"),
      new OrchestratorError("transcript_corrupt", "damaged", { path: "/x" }),
      new CliError("bad flag: fix it"),
    ];
    expect(errors.map((error) => [error instanceof ForkloopError, error.name, error.code])).toEqual([
      [true, "OptionsError", "invalid_options"],
      [true, "OrchestratorError", "transcript_corrupt"],
      [true, "CliError", "usage"],
    ]);
    expect(errors[1]?.data).toEqual({ path: "/x" });
    // A lock held by a live owner is bad input of the same family (exit 2, naming the owner).
    const held = new LockHeldError("held", "/lock", { pid: 1, host: "h", startedAt: "t" } as never);
    expect([held instanceof ForkloopError, held.code]).toEqual([true, "invalid_options"]);
  });
});
