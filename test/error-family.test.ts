import { ForkloopError } from "@forkloop/loop-core/errors";
import { OrchestratorError } from "@forkloop/orchestrator";
import { OptionsError } from "@forkloop/sdk/errors";
import { LockHeldError } from "@forkloop/sdk/owner-lock";
import { describe, expect, it } from "vitest";
import { CliError } from "../apps/cli/src/cli-error.js";
import { packageEntries } from "./support/package-exports.js";

type ErrorClass = abstract new (...args: never[]) => Error;

/** A value a module exports that is an error class (a class whose instances are Errors). */
function isErrorClass(value: unknown): value is ErrorClass {
  return typeof value === "function" && value.prototype instanceof Error;
}

/** Every error class the workspace's public entries export, as `entry:Name`. */
async function exportedErrorClasses(): Promise<Map<string, ErrorClass>> {
  const found = new Map<string, ErrorClass>();
  for (const entry of packageEntries()) {
    const loaded = (await import(entry.specifier)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(loaded))
      if (isErrorClass(value)) found.set(`${entry.specifier}:${name}`, value);
  }
  return found;
}

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

  it("every error class a package exports is a ForkloopError — the simulator's by the family's brand, the Agent SDK look-alikes named Error (control: a plain Error subclass is not)", async () => {
    const classes = await exportedErrorClasses();
    // The enumeration sees the classes this test is about, in every package that has them.
    for (const name of [
      "@forkloop/sim:FaultSpecError",
      "@forkloop/sim:ScenarioError",
      "@forkloop/sim:NoMatchingRuleError",
      "@forkloop/sdk:AbortError",
      "@forkloop/sdk:ErrorResultError",
      "@forkloop/sdk/errors:OptionsError",
    ])
      expect(classes.has(name), name).toBe(true);
    const outside = [...classes].filter(([, value]) => !(value.prototype instanceof ForkloopError));
    expect(outside.map(([name]) => name)).toEqual([]);
    // Control: the same check finds a class of another root.
    class StrayError extends Error {}
    expect([isErrorClass(StrayError), StrayError.prototype instanceof ForkloopError]).toEqual([true, false]);
    expect(new StrayError("x") instanceof ForkloopError).toBe(false);
  });

  it("the simulator's errors carry a code; a subclass's instanceof is still its own; the Agent SDK look-alikes keep their name", async () => {
    const { FaultSpecError, ScenarioError, NoMatchingRuleError } = await import("@forkloop/sim");
    const { AbortError, ErrorResultError } = await import("@forkloop/sdk");
    const fault = new FaultSpecError("bad");
    expect([fault instanceof ForkloopError, fault.code, fault.name]).toEqual([
      true,
      "invalid_fault_spec",
      "FaultSpecError",
    ]);
    expect([new ScenarioError("x").code, new NoMatchingRuleError("x").code]).toEqual([
      "invalid_scenario",
      "no_matching_rule",
    ]);
    expect(fault instanceof OptionsError).toBe(false);
    expect(new OptionsError("x") instanceof FaultSpecError).toBe(false);
    const aborted = new AbortError("Claude Code process aborted by user");
    expect([aborted instanceof Error, aborted.name, aborted.code, String(aborted)]).toEqual([
      true,
      "Error",
      "aborted",
      "Error: Claude Code process aborted by user",
    ]);
    const result = { type: "result", subtype: "error_max_turns" } as never;
    const failed = new ErrorResultError("x", result);
    expect([failed.name, failed.code, failed.data]).toEqual([
      "Error",
      "error_result",
      { subtype: "error_max_turns" },
    ]);
  });
});
