import { describe, expect, it } from "vitest";
import { toolDefinition } from "./build-request.js";
import { type JsonSchemaInput, jsonSchemaInput } from "./json-schema-input.js";
import type { ToolUseBlock, UserMessage } from "./messages.js";
import { testContext } from "./testing/index.js";
import type { Tool } from "./tool.js";
import { runToolUse } from "./tool-execution.js";

function compile(schema: unknown): JsonSchemaInput {
  const result = jsonSchemaInput(schema);
  if (!result.ok) throw new Error(result.error);
  return result;
}

function issues(input: JsonSchemaInput, value: unknown): { path: PropertyKey[]; message: string }[] {
  const parsed = input.inputSchema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map(({ path, message }) => ({ path, message }));
}

const fileSchema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: {
    path: { type: "string", minLength: 1 },
    lines: { type: "array", items: { type: "integer", minimum: 1 } },
    mode: { enum: ["read", "stat"] },
    range: { $ref: "#/definitions/range" },
  },
  required: ["path"],
  additionalProperties: false,
  definitions: { range: { type: "object", properties: { from: { type: "integer" } }, required: ["from"] } },
};

describe("R-M1: tools whose input schema is JSON Schema (jsonSchemaInput)", () => {
  it("R-M1: valid input passes unchanged; each violation is an issue at its JSON path", () => {
    const input = compile(fileSchema);
    expect(input.inputSchema.safeParse({ path: "a.txt", lines: [1, 2], range: { from: 3 } })).toEqual({
      success: true,
      data: { path: "a.txt", lines: [1, 2], range: { from: 3 } },
    });
    expect(issues(input, {})).toEqual([{ path: [], message: 'missing required property "path"' }]);
    expect(issues(input, { path: "a", extra: 1 })).toEqual([
      { path: [], message: 'unexpected property "extra"' },
    ]);
    expect(issues(input, { path: "a", lines: [1, 0] })).toEqual([
      { path: ["lines", 1], message: "must be >= 1" },
    ]);
    expect(issues(input, { path: "a", range: {} })).toEqual([
      { path: ["range"], message: 'missing required property "from"' },
    ]);
    expect(issues(input, { path: "a", mode: "write" })[0]?.message).toContain('["read","stat"]');
    // allErrors: every problem at once, so the model can fix them in one retry.
    expect(issues(input, { path: "", lines: ["x"] })).toHaveLength(2);
  });

  it("R-M1: the draft is the schema's own — 2020-12 by default ($defs, prefixItems), draft-07 when declared", () => {
    const tuple = {
      type: "object",
      properties: { pair: { type: "array", prefixItems: [{ type: "string" }] } },
    };
    // 2020-12 (no $schema) knows prefixItems: the first item must be a string.
    expect(issues(compile(tuple), { pair: [1] })).toEqual([{ path: ["pair", 0], message: "must be string" }]);
    // draft-07 has no prefixItems: the same schema constrains nothing there.
    expect(
      issues(compile({ ...tuple, $schema: "http://json-schema.org/draft-07/schema#" }), { pair: [1] }),
    ).toEqual([]);
    const withDefs = {
      type: "object",
      properties: { n: { $ref: "#/$defs/positive" } },
      $defs: { positive: { type: "number", exclusiveMinimum: 0 } },
    };
    expect(issues(compile(withDefs), { n: 0 })).toEqual([{ path: ["n"], message: "must be > 0" }]);
  });

  it("R-M1: a schema that cannot be compiled or is not an object schema is refused with the reason", () => {
    const notCompilable = jsonSchemaInput({ type: "object", properties: { a: { type: "strin" } } });
    expect(notCompilable).toMatchObject({
      ok: false,
      error: expect.stringContaining("not valid JSON Schema"),
    });
    const dangling = jsonSchemaInput({ type: "object", properties: { a: { $ref: "#/$defs/missing" } } });
    expect(dangling.ok).toBe(false);
    expect(jsonSchemaInput({ type: "string" })).toEqual({
      ok: false,
      error: 'the input schema\'s type is "string", not "object"',
    });
    expect(jsonSchemaInput(null)).toEqual({ ok: false, error: "the input schema is not a JSON object" });
  });

  it("R-V2: compileOnFirstUse compiles at the first validation, and a schema that fails then fails each validation", () => {
    const bad = { type: "object", properties: { a: { type: "strin" } } };
    const deferred = jsonSchemaInput(bad, { compileOnFirstUse: true });
    if (!deferred.ok) throw new Error(`refused before any use: ${deferred.error}`);
    expect(deferred.inputJSONSchema).toEqual(bad);
    for (let attempt = 0; attempt < 2; attempt++) {
      expect(issues(deferred, { a: "x" })).toEqual([
        { path: [], message: expect.stringContaining("not valid JSON Schema") },
      ]);
    }
    const good = jsonSchemaInput(fileSchema, { compileOnFirstUse: true });
    if (!good.ok) throw new Error(good.error);
    expect(issues(good, { path: "a.txt" })).toEqual([]);
    expect(issues(good, { path: "" })).toHaveLength(1);
  });

  it("R-M1: two schemas with the same $id both compile and keep their own rules", () => {
    const a = compile({ $id: "https://example.com/shared.json", type: "object", required: ["a"] });
    const b = compile({ $id: "https://example.com/shared.json", type: "object", required: ["b"] });
    expect(issues(a, { b: 1 })).toHaveLength(1);
    expect(issues(b, { b: 1 })).toEqual([]);
  });

  it("R-M1: the API is sent the JSON Schema itself (minus $schema), not a zod rendering of the validator", () => {
    const input = compile(fileSchema);
    const tool: Tool = {
      name: "mcp__files__read",
      description: "reads",
      ...input,
      isConcurrencySafe: () => true,
      isReadOnly: () => true,
      maxResultSizeChars: 1_000,
      call: async () => ({ content: "" }),
    };
    const { $schema: _draft, ...expected } = fileSchema;
    expect(toolDefinition(tool).input_schema).toEqual(expected);
    expect(JSON.stringify(toolDefinition(tool).input_schema)).toBe(JSON.stringify(expected));
  });

  it("R-M1 / R-T1: invalid input never reaches call; the model gets the JSON path in the error", async () => {
    const calls: unknown[] = [];
    const tool: Tool = {
      name: "mcp__files__read",
      description: "reads",
      ...compile(fileSchema),
      isConcurrencySafe: () => true,
      isReadOnly: () => true,
      maxResultSizeChars: 1_000,
      call: async (input) => {
        calls.push(input);
        return { content: "ok" };
      },
    };
    const use = (input: Record<string, unknown>) =>
      ({
        type: "tool_use",
        id: "toolu_1",
        name: tool.name,
        input,
        caller: { type: "direct" },
      }) as ToolUseBlock;
    const run = async (input: Record<string, unknown>) => {
      const outcome = await runToolUse(use(input), null, {
        context: testContext({ tools: [tool] }),
        canUseTool: async () => ({ behavior: "allow" }),
        hooks: undefined,
        uuid: () => crypto.randomUUID(),
      });
      return (outcome.message as UserMessage).message.content[0] as { content: string; is_error?: boolean };
    };
    const bad = await run({ path: "a", lines: [0] });
    expect(bad.is_error).toBe(true);
    expect(bad.content).toContain("InputValidationError");
    expect(bad.content).toContain("at lines[0]");
    expect(calls).toEqual([]);
    expect((await run({ path: "a" })).content).toBe("ok");
    expect(calls).toEqual([{ path: "a" }]);
  });
});

describe("R-S12: a schema's patterns run in bounded time against the model's strings", () => {
  it("R-S12: pattern ^(a+)+$ against 5,000 a's and a b ends (V8's backtracking engine would not in hours); each pattern of a schema is its own; a pattern RE2 cannot read (lookahead) is still enforced", () => {
    const input = jsonSchemaInput({
      type: "object",
      properties: {
        nested: { type: "string", pattern: "^(a+)+$" },
        plain: { type: "string", pattern: "^[a-z]+-\\d{2}$" },
        lookahead: { type: "string", pattern: "^(?=x)x+$" },
      },
    });
    if (!input.ok) throw new Error(input.error);
    const valid = (value: Record<string, unknown>) => input.inputSchema.safeParse(value).success;
    expect(valid({ nested: `${"a".repeat(5_000)}b` })).toBe(false);
    expect(valid({ nested: "aaaa" })).toBe(true);
    expect(valid({ plain: "abc-12" })).toBe(true);
    expect(valid({ plain: "abc-1x" })).toBe(false);
    expect(valid({ lookahead: "xx" })).toBe(true);
    expect(valid({ lookahead: "yx" })).toBe(false);
  });
});
