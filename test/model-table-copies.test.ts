import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

// loop-core imports no sibling and the simulator has no internal dependency (SPEC §0), so the one
// model table lives in both packages as identical files.
describe("R-D1: one model table", () => {
  it("R-D1: loop-core's and the simulator's copies of model-table.ts are identical", () => {
    const core = readFileSync(join(root, "packages/loop-core/src/model-table.ts"), "utf8");
    const sim = readFileSync(join(root, "packages/sim/src/model-table.ts"), "utf8");
    expect(sim).toBe(core);
  });
});
