/**
 * A deterministic value that satisfies a JSON Schema, for the replies the API guarantees to
 * match a schema (R-D2): a forced `tool_choice` the brain did not answer with a tool
 * call, a `strict` tool, `output_config.format`. The same schema always gives the same value.
 *
 * Covers what tool schemas and structured-output schemas use: `type` (or a list of types),
 * `properties` / `required`, `items` / `prefixItems`, `enum`, `const`, `default`, `anyOf` /
 * `oneOf` / `allOf`, local `$ref`s (`#/$defs/…`, `#/definitions/…`), string `format`s and
 * lengths, number bounds and `multipleOf`, array lengths. A `pattern` is not searched: the
 * string is the schema's `default` or `example` when it has one (the checker then decides).
 */
export type JsonSchema = Record<string, unknown>;

const MAX_DEPTH = 12;

const FORMATS: Readonly<Record<string, string>> = {
  "date-time": "2026-01-01T00:00:00Z",
  date: "2026-01-01",
  time: "00:00:00Z",
  duration: "PT1M",
  email: "simulator@example.com",
  "idn-email": "simulator@example.com",
  hostname: "example.com",
  "idn-hostname": "example.com",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
  uri: "https://example.com/simulated",
  "uri-reference": "https://example.com/simulated",
  iri: "https://example.com/simulated",
  uuid: "00000000-0000-4000-8000-000000000000",
};

export function exampleForSchema(schema: unknown): unknown {
  return example(schema, isObject(schema) ? schema : {}, "value", 0);
}

function example(raw: unknown, root: JsonSchema, name: string, depth: number): unknown {
  if (raw === true || !isObject(raw) || depth > MAX_DEPTH) return null;
  const schema = withDescriptionHints(raw);
  if (typeof schema.$ref === "string") return example(resolveRef(root, schema.$ref), root, name, depth + 1);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ("default" in schema) return schema.default;
  const branches = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(branches) && branches.length > 0) {
    // Prefer a branch that is not `null`, so an optional field still carries a value.
    const branch = branches.find((b) => !(isObject(b) && b.type === "null")) ?? branches[0];
    return example(branch, root, name, depth + 1);
  }
  if (Array.isArray(schema.allOf)) return example(mergeAllOf(schema), root, name, depth + 1);
  switch (typeOf(schema)) {
    case "object":
      return objectExample(schema, root, depth);
    case "array":
      return arrayExample(schema, root, name, depth);
    case "string":
      return stringExample(schema, name);
    case "integer":
      return numberExample(schema, true);
    case "number":
      return numberExample(schema, false);
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return `simulated ${name}`;
  }
}

/**
 * The Anthropic SDKs' `transformJSONSchema` moves keywords structured outputs do not enforce
 * (`minimum`, `enum` on some types, `minItems` > 1, …) into the description as
 * `{minimum: 1888, maximum: 2100}`, for the model to follow. The simulator follows them too.
 */
function withDescriptionHints(schema: JsonSchema): JsonSchema {
  const description = typeof schema.description === "string" ? schema.description : "";
  const block = /\{([^{}]*(?:\[[^\]]*\][^{}]*)*)\}\s*$/.exec(description)?.[1];
  if (block === undefined) return schema;
  const keys = [...block.matchAll(/(?:^|, )([A-Za-z$][\w$]*): /g)];
  const hints: JsonSchema = {};
  for (const [i, match] of keys.entries()) {
    const start = (match.index ?? 0) + match[0].length;
    const end = keys[i + 1]?.index ?? block.length;
    try {
      hints[match[1] ?? ""] = JSON.parse(block.slice(start, end));
    } catch {
      return schema;
    }
  }
  return { ...hints, ...schema };
}

function typeOf(schema: JsonSchema): string | undefined {
  const type = schema.type;
  if (typeof type === "string") return type;
  if (Array.isArray(type)) return (type.find((t) => t !== "null") ?? type[0]) as string | undefined;
  if (isObject(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  return undefined;
}

function objectExample(schema: JsonSchema, root: JsonSchema, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = isObject(schema.properties) ? schema.properties : {};
  // Every declared property, required or not: a richer value that is still valid.
  for (const [key, property] of Object.entries(properties)) {
    out[key] = example(property, root, key, depth + 1);
  }
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const key of required) {
    if (typeof key === "string" && !(key in out)) {
      const extra = isObject(schema.additionalProperties) ? schema.additionalProperties : {};
      out[key] = example(extra, root, key, depth + 1);
    }
  }
  return out;
}

function arrayExample(schema: JsonSchema, root: JsonSchema, name: string, depth: number): unknown[] {
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
  const min = typeof schema.minItems === "number" ? schema.minItems : 1;
  const max = typeof schema.maxItems === "number" ? schema.maxItems : Number.POSITIVE_INFINITY;
  const count = Math.min(Math.max(min, prefix.length, 1), max);
  return Array.from({ length: count }, (_, i) =>
    example(i < prefix.length ? prefix[i] : (schema.items ?? {}), root, name, depth + 1),
  );
}

function stringExample(schema: JsonSchema, name: string): string {
  if (Array.isArray(schema.examples) && typeof schema.examples[0] === "string") return schema.examples[0];
  let text = (typeof schema.format === "string" ? FORMATS[schema.format] : undefined) ?? `simulated ${name}`;
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Number.POSITIVE_INFINITY;
  if (text.length < min) text = text.padEnd(min, "x");
  return text.length > max ? text.slice(0, max) : text;
}

function numberExample(schema: JsonSchema, integer: boolean): number {
  const num = (key: string): number | undefined =>
    typeof schema[key] === "number" ? (schema[key] as number) : undefined;
  const step = num("multipleOf") ?? (integer ? 1 : undefined);
  const exclusiveMin = num("exclusiveMinimum");
  const exclusiveMax = num("exclusiveMaximum");
  const low = num("minimum") ?? (exclusiveMin === undefined ? undefined : exclusiveMin + (step ?? 1));
  const high = num("maximum") ?? (exclusiveMax === undefined ? undefined : exclusiveMax - (step ?? 1));
  const value = low ?? Math.min(1, high ?? 1);
  return step === undefined ? value : Math.ceil(value / step) * step;
}

function mergeAllOf(schema: JsonSchema): JsonSchema {
  const merged: JsonSchema = { ...schema, allOf: undefined };
  const properties: Record<string, unknown> = isObject(schema.properties) ? { ...schema.properties } : {};
  const required = new Set<unknown>(Array.isArray(schema.required) ? schema.required : []);
  for (const part of schema.allOf as unknown[]) {
    if (!isObject(part)) continue;
    Object.assign(merged, part);
    if (isObject(part.properties)) Object.assign(properties, part.properties);
    if (Array.isArray(part.required)) for (const key of part.required) required.add(key);
  }
  delete merged.allOf;
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.size > 0) merged.required = [...required];
  return merged;
}

function resolveRef(root: JsonSchema, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return {};
  let node: unknown = root;
  for (const part of ref.slice(2).split("/")) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    node = isObject(node) ? node[key] : undefined;
  }
  return node ?? {};
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
