import { describe, expect, it } from "vitest";
import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";

describe("lazySchema (R-V2)", () => {
  it("R-V2: builds the schema at its first read, once, and stands for it in parse, instanceof and other schemas", () => {
    let builds = 0;
    const point = lazySchema(() => {
      builds++;
      return z.object({ x: z.number().describe("across"), y: z.number() });
    });
    expect(builds).toBe(0);
    expect(point.safeParse({ x: 1, y: 2 }).success).toBe(true);
    expect(builds).toBe(1);
    expect(point.safeParse({ x: "1", y: 2 }).success).toBe(false);
    expect(() => point.parse({})).toThrow();
    expect(point instanceof z.ZodObject).toBe(true);
    expect(Object.keys(point.shape)).toEqual(["x", "y"]);
    // Inside another schema, and converted to JSON Schema through it (its fields' metadata kept).
    const line = z.union([z.object({ point }), z.string()]);
    expect(line.safeParse({ point: { x: 1, y: 2 } }).success).toBe(true);
    expect(line.safeParse({ point: { x: 1 } }).success).toBe(false);
    expect(JSON.stringify(z.toJSONSchema(z.object({ point })))).toContain('"description":"across"');
    expect(point.optional().safeParse(undefined).success).toBe(true);
    expect(builds).toBe(1);
  });
});
