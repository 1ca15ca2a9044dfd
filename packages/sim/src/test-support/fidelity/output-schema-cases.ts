import { bad, base, type Case, ok, PAGE } from "./case.js";

const format = (schema: Record<string, unknown>) => ({
  output_config: { format: { type: "json_schema", schema } },
});
const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
  ...extra,
});
const strictTool = (input_schema: Record<string, unknown>) => ({
  tools: [{ name: "record", description: "records it", strict: true, input_schema }],
});
const MODEL = "claude-sonnet-4-6";

/** The JSON Schema subset of structured outputs and strict tools (R-D2; page's "JSON Schema limitations"). */
export const OUTPUT_SCHEMA_CASES: Case[] = [
  {
    page: PAGE.structuredOutputs,
    title: "output_config.format with enum, const, anyOf, $ref to $defs, formats and minItems 1 → accepted",
    body: base(
      MODEL,
      format(
        object(
          {
            kind: { type: "string", enum: ["a", "b"] },
            at: { type: "string", format: "date-time" },
            tags: { type: "array", items: { type: "string" }, minItems: 1 },
            owner: { anyOf: [{ type: "null" }, { $ref: "#/$defs/owner" }] },
          },
          { $defs: { owner: object({ name: { type: "string" } }) } },
        ),
      ),
    ),
    expect: ok,
  },
  {
    page: PAGE.structuredOutputs,
    title: "output_config.format with minLength → 400",
    body: base(MODEL, format(object({ name: { type: "string", minLength: 1 } }))),
    expect: bad("output_config.format.schema: For 'string' type, property 'minLength' is not supported"),
  },
  {
    page: PAGE.structuredOutputs,
    title: "output_config.format with minimum → 400",
    body: base(MODEL, format(object({ age: { type: "integer", minimum: 0 } }))),
    expect: bad("output_config.format.schema: For 'integer' type, property 'minimum' is not supported"),
  },
  {
    page: PAGE.structuredOutputs,
    title: "output_config.format with multipleOf → 400",
    body: base(MODEL, format(object({ n: { type: "number", multipleOf: 0.5 } }))),
    expect: bad("output_config.format.schema: For 'number' type, property 'multipleOf' is not supported"),
  },
  {
    page: PAGE.structuredOutputs,
    title: "output_config.format with minItems 2 → 400 (only 0 or 1)",
    body: base(MODEL, format(object({ tags: { type: "array", items: { type: "string" }, minItems: 2 } }))),
    expect: bad(/'minItems' 2 is not supported/),
  },
  {
    page: PAGE.structuredOutputs,
    title: "output_config.format with additionalProperties true → 400",
    body: base(MODEL, format({ ...object({ a: { type: "string" } }), additionalProperties: true })),
    expect: bad(
      "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false",
    ),
  },
  {
    page: PAGE.structuredOutputs,
    title: "output_config.format with a recursive $ref → 400",
    body: base(
      MODEL,
      format(
        object(
          { root: { $ref: "#/$defs/node" } },
          {
            $defs: {
              node: object({ children: { type: "array", items: { $ref: "#/$defs/node" } } }),
            },
          },
        ),
      ),
    ),
    expect: bad(/recursive schemas are not supported/),
  },
  {
    page: PAGE.structuredOutputs,
    title: "output_config.format with an external $ref → 400",
    body: base(MODEL, format(object({ a: { $ref: "https://example.com/a.json" } }))),
    expect: bad(/external \$ref/),
  },
  {
    page: PAGE.structuredOutputs,
    title: "a strict tool whose input_schema has maxLength → 400",
    body: base(MODEL, strictTool(object({ note: { type: "string", maxLength: 10 } }))),
    expect: bad("tools.0.custom: For 'string' type, property 'maxLength' is not supported"),
  },
  {
    page: PAGE.structuredOutputs,
    title: "a tool that is not strict may use minLength and minimum → accepted",
    body: base(MODEL, {
      tools: [
        {
          name: "record",
          input_schema: {
            type: "object",
            properties: { n: { type: "integer", minimum: 1 }, s: { type: "string", minLength: 2 } },
          },
        },
      ],
    }),
    expect: ok,
  },
];
