import { describe, expect, it } from "vitest";
import { closedObjectSchema } from "./closed-object-schema.js";

// Structured outputs page (https://platform.claude.com/docs/en/build-with-claude/structured-outputs,
// "JSON Schema limitations"): every object sets additionalProperties to false.
describe("R-X3: structured-output schemas are sent with every object closed", () => {
  it("R-X3: closes objects in properties, items, anyOf and $defs; keeps what the user set; copies", () => {
    const schema = {
      type: "object",
      properties: {
        list: { type: "array", items: { type: "object", properties: { a: { type: "string" } } } },
        either: { anyOf: [{ type: ["object", "null"], properties: {} }, { type: "string" }] },
        open: { type: "object", additionalProperties: true },
      },
      $defs: { node: { properties: { b: { type: "integer" } } } },
    };
    const closed = closedObjectSchema(schema) as typeof schema & { additionalProperties: boolean };
    expect(closed.additionalProperties).toBe(false);
    expect(closed.properties.list.items).toMatchObject({ additionalProperties: false });
    expect(closed.properties.either.anyOf[0]).toMatchObject({ additionalProperties: false });
    expect(closed.properties.either.anyOf[1]).toEqual({ type: "string" });
    expect(closed.properties.open.additionalProperties).toBe(true);
    expect(closed.$defs.node).toMatchObject({ additionalProperties: false });
    expect(schema).not.toHaveProperty("additionalProperties");
    expect(schema.properties.list.items).not.toHaveProperty("additionalProperties");
  });
});
