import { describe, expect, it } from "vitest";
import { BatchError } from "./batch-error.js";
import { newBatchSpec } from "./new-batch-spec.js";

const input = {
  id: "b-1",
  cwd: "/p",
  source: { kind: "files", pattern: "src/*.ts", cwd: "/p" } as const,
  prompt: "Summarize {{file}}",
  dir: "/state/batches/b-1",
  settings: {},
  loop: {},
  startFlags: { concurrency: "4" },
};

describe("a new batch's batch.json", () => {
  it("R-X2: the defaults — Sonnet 4.6, 8 turns, dontAsk, no rules, the report in the batch's directory", () => {
    expect(newBatchSpec(input)).toMatchObject({
      id: "b-1",
      source: { kind: "files", pattern: "src/*.ts" },
      model: "claude-sonnet-4-6",
      maxTurns: 8,
      permissionMode: "dontAsk",
      allowedTools: [],
      disallowedTools: [],
      fallbackModels: [],
      outputDir: "/state/batches/b-1",
      startFlags: { concurrency: "4" },
    });
    expect(newBatchSpec(input)).not.toHaveProperty("loop");
  });

  it("R-R7: the flags' settings lay over the defaults, and the loop choices are kept", () => {
    const spec = newBatchSpec({
      ...input,
      settings: { maxTurns: 3, permissionMode: "acceptEdits" },
      loop: { toolUseSummaryModel: "claude-haiku-4-5" },
    });
    expect(spec).toMatchObject({
      maxTurns: 3,
      permissionMode: "acceptEdits",
      loop: { toolUseSummaryModel: "claude-haiku-4-5" },
    });
  });

  it("R-B1: settings a resume or a worker would refuse are refused now (invalid_batch, exit 2)", () => {
    const refused = () => newBatchSpec({ ...input, settings: { model: "claude sonnet" } });
    expect(refused).toThrow(BatchError);
    expect(refused).toThrow(/the batch's settings are not valid: .*model/);
    try {
      refused();
    } catch (error) {
      expect((error as BatchError).code).toBe("invalid_batch");
    }
  });
});
