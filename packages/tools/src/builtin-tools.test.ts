import { toolDefinition } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createBuiltinTools } from "./builtin-tools.js";
import { callTool, resultText, useTempWorkspace } from "./testing/index.js";
import { todoWriteTool } from "./tools/todo-write.js";

const ws = useTempWorkspace();

describe("createBuiltinTools", () => {
  const tools = createBuiltinTools();
  const byName = new Map(tools.map((tool) => [tool.name, tool]));

  it("R-T3: provides Claude Code's tool names in a stable order", () => {
    expect(tools.map((tool) => tool.name)).toEqual([
      "Read",
      "Write",
      "Edit",
      "Glob",
      "Grep",
      "LS",
      "Bash",
      "TodoWrite",
      "TaskStop",
      "NotebookEdit",
      "WebFetch",
      "WebSearch",
    ]);
  });

  it("R-V3: every session's tools share one input schema per tool, whatever their options, so it is converted once", () => {
    const other = createBuiltinTools({ bashDefaultTimeoutMs: 5_000, denyRules: ["Read(./.env)"] });
    expect(other.map((tool) => tool.inputSchema)).toEqual(tools.map((tool) => tool.inputSchema));
    for (const [index, tool] of other.entries()) expect(tool.inputSchema).toBe(tools[index]?.inputSchema);
  });

  it("R-T2: read tools are concurrency-safe and read-only; writers and Bash are not", () => {
    for (const name of ["Read", "Glob", "Grep", "LS"]) {
      expect(byName.get(name)?.isConcurrencySafe({})).toBe(true);
      expect(byName.get(name)?.isReadOnly({})).toBe(true);
    }
    for (const name of ["Write", "Edit", "TodoWrite"]) {
      expect(byName.get(name)?.isConcurrencySafe({})).toBe(false);
      expect(byName.get(name)?.isReadOnly({})).toBe(false);
    }
    expect(byName.get("Bash")?.isReadOnly({ command: "npm install" })).toBe(false);
  });

  it("R-T3: every tool has a finite result cap except Read, which limits itself", () => {
    for (const tool of tools) {
      if (tool.name === "Read") expect(tool.maxResultSizeChars).toBe(Number.POSITIVE_INFINITY);
      else expect(Number.isFinite(tool.maxResultSizeChars)).toBe(true);
    }
  });

  it("R-T1: every input schema converts to a JSON schema object for the API", () => {
    for (const tool of tools) {
      const schema = z.toJSONSchema(tool.inputSchema) as { type?: string; properties?: object };
      expect(schema.type).toBe("object");
      expect(Object.keys(schema.properties ?? {}).length).toBeGreaterThan(0);
    }
    const grep = z.toJSONSchema(byName.get("Grep")?.inputSchema ?? z.object({})) as { required?: string[] };
    expect(grep.required).toEqual(["pattern"]);
  });

  it("R-V2: each tool's input JSON Schema is computed ahead, byte for byte zod's conversion of its input schema, so its definition is the same", () => {
    const sandboxed = createBuiltinTools({ bashSandbox: { enabled: true }, denyRules: ["Read(./.env)"] });
    for (const tool of [...tools, ...sandboxed]) {
      const converted = z.toJSONSchema(tool.inputSchema, { io: "input" });
      expect(
        JSON.stringify(tool.inputJSONSchema),
        `${tool.name}'s input schema changed: run node scripts/tool-input-json-schemas.mjs`,
      ).toBe(JSON.stringify(converted));
      const { inputJSONSchema: _ahead, ...unconverted } = tool;
      expect(JSON.stringify(toolDefinition(tool))).toBe(JSON.stringify(toolDefinition(unconverted)));
    }
  });

  it("R-T3: bashDefaultTimeoutMs sets Bash's default timeout", async () => {
    const [bash] = createBuiltinTools({ bashDefaultTimeoutMs: 300 }).filter((tool) => tool.name === "Bash");
    const result = await callTool(bash as (typeof tools)[number], { command: "sleep 5" }, ws.context());
    expect(resultText(result)).toMatch(/timed out after 300 ms/);
  });
});

describe("TodoWrite", () => {
  it("R-T3: stores the list in the agent state", async () => {
    const context = ws.context();
    const todos = [
      { content: "Run tests", status: "in_progress", activeForm: "Running tests" },
      { content: "Fix lint", status: "pending" },
    ];
    const result = await callTool(todoWriteTool, { todos }, context);
    expect(resultText(result)).toMatch(/0 completed, 1 in progress, 1 pending/);
    expect(context.agentState.todos).toEqual(todos);
    const invalid = await callTool(todoWriteTool, { todos: [{ content: "x", status: "done" }] }, context);
    expect(invalid.isError).toBe(true);
  });
});
