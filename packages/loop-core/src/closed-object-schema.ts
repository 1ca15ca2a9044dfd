/**
 * R-X3, R-D2: a JSON Schema with every object closed — `additionalProperties: false` on each
 * object node that does not set it. Structured outputs refuse an object schema that leaves it out
 * (`For 'object' type, 'additionalProperties' must be explicitly set to false`, structured outputs
 * page, https://platform.claude.com/docs/en/build-with-claude/structured-outputs, "JSON Schema
 * limitations"), and the official SDK's own transform closes every object too. A node that sets
 * it (even to something the API refuses) is left as the user wrote it, so the API's 400 names
 * the user's choice. The input is not changed; subschemas are copied where they change.
 */
export function closedObjectSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return close(schema) as Record<string, unknown>;
}

const SCHEMA_MAPS = ["properties", "$defs", "definitions", "patternProperties"] as const;
const SCHEMA_LISTS = ["anyOf", "allOf", "oneOf", "prefixItems"] as const;

function close(node: unknown): unknown {
  if (node === null || typeof node !== "object" || Array.isArray(node)) return node;
  const out: Record<string, unknown> = { ...(node as Record<string, unknown>) };
  for (const key of SCHEMA_MAPS) {
    const map = out[key];
    if (map !== null && typeof map === "object" && !Array.isArray(map)) {
      out[key] = Object.fromEntries(Object.entries(map).map(([name, child]) => [name, close(child)]));
    }
  }
  for (const key of SCHEMA_LISTS) {
    const list = out[key];
    if (Array.isArray(list)) out[key] = list.map(close);
  }
  if (Array.isArray(out.items)) out.items = out.items.map(close);
  else if (out.items !== undefined) out.items = close(out.items);
  if (out.not !== undefined) out.not = close(out.not);
  if (isObjectNode(out) && !("additionalProperties" in out)) out.additionalProperties = false;
  return out;
}

/** An object node: `type` "object" (alone or in a type list), or `properties` without a type. */
function isObjectNode(node: Record<string, unknown>): boolean {
  const type = node.type;
  if (type === "object") return true;
  if (Array.isArray(type)) return type.includes("object");
  return type === undefined && "properties" in node;
}
