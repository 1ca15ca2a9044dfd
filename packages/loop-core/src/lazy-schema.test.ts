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

describe("lazySchema's registry metadata (R-V2)", () => {
  const kinds: (() => z.ZodType)[] = [
    () => z.object({ x: z.number().describe("across"), y: z.string().optional() }),
    () => z.object({ x: z.number() }).describe("a point"),
    () => z.string().meta({ title: "T", description: "d", examples: ["a"] }),
    () => z.object({ a: z.array(z.string()).default([]), b: z.enum(["p", "q"]) }).strict(),
  ];

  it("R-V2: metadata given inside build (a top-level .describe() or .meta()) reaches z.toJSONSchema, description and meta(), alone and inside another schema, as the eager schema's", () => {
    for (const make of kinds) {
      const eager = make();
      const lazy = lazySchema(make);
      for (const io of ["input", "output"] as const) {
        expect(JSON.stringify(z.toJSONSchema(lazy, { io }))).toBe(
          JSON.stringify(z.toJSONSchema(eager, { io })),
        );
        const within = (schema: z.ZodType) =>
          z.toJSONSchema(z.object({ p: schema, q: schema.optional() }), { io });
        expect(JSON.stringify(within(lazy))).toBe(JSON.stringify(within(eager)));
      }
      expect(lazy.description).toBe(eager.description);
      expect(lazy.meta()).toEqual(eager.meta());
    }
    // Control: the described kinds do carry their description.
    expect(JSON.stringify(z.toJSONSchema(lazySchema(kinds[1]!)))).toContain('"description":"a point"');
  });

  it("R-V2: metadata put on the lazy value itself (a registry's add, register, describe) is read from it", () => {
    const added = lazySchema(() => z.object({ x: z.number() }));
    z.globalRegistry.add(added, { description: "added" });
    expect(z.toJSONSchema(added)).toMatchObject({ description: "added", required: ["x"] });
    expect(added.description).toBe("added");
    expect(added.meta()).toEqual({ description: "added" });
    const registered = lazySchema(() => z.object({ x: z.number() })).register(z.globalRegistry, {
      description: "registered",
    });
    expect(z.toJSONSchema(registered)).toMatchObject({ description: "registered" });
    expect(registered.description).toBe("registered");
    const described = lazySchema(() => z.object({ x: z.number() })).describe("described");
    expect(z.toJSONSchema(z.object({ p: described }))).toMatchObject({
      properties: { p: { description: "described" } },
    });
  });
});
