import { describe, expect, it } from "vitest";
import { parentSideTool } from "./parent-side-tool.js";
import type { SubAgentIo } from "./sub-agent-io.js";

/** Building and validating never reach the parent: only `call` would. */
const unusedIo = {} as SubAgentIo;

describe("parent-side tools in a worker", () => {
  it("R-V2: a fork builds a parent-side tool without compiling its schema; the first call's validation does", () => {
    // A schema ajv refuses: compiled at build time (as before), building the tool threw.
    const schema = { type: "object" as const, properties: { a: { type: "strin" } } };
    const tool = parentSideTool({ name: "Odd", description: "", input_schema: schema }, unusedIo);
    expect(tool.inputJSONSchema).toEqual(schema);
    const parsed = tool.inputSchema.safeParse({ a: "x" });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain("not valid JSON Schema");
  });
});
