import { type ApiError, invalidRequest } from "./api-error.js";
import type { CountTokensRequest } from "./request-schema.js";

/**
 * The JSON Schema subset structured outputs take (R-D2; structured outputs page,
 * https://platform.claude.com/docs/en/build-with-claude/structured-outputs, "JSON Schema
 * limitations"): no numerical constraints (`minimum`, `maximum`, `exclusiveMinimum`,
 * `exclusiveMaximum`, `multipleOf`), no string length constraints (`minLength`, `maxLength`), no
 * array constraints beyond `minItems` 0 or 1, `additionalProperties` only `false`, no recursive
 * schemas and no external `$ref`. The SDKs' helpers move such constraints into descriptions
 * before they send a schema; a schema sent as it is gets a 400. Checked for
 * `output_config.format` (and the beta `output_format`) and for `strict: true` tools; a tool that
 * is not strict may use all of JSON Schema.
 * The keyword and additionalProperties 400s are the API's: they name the schema's place
 * (`output_config.format.schema`, `output_format.schema`, `tools.N.custom`) and the node's type,
 * not the node's path — `For 'integer' type, property 'minimum' is not supported`
 * (agentjido/req_llm#302), `For 'integer' type, properties maximum, minimum are not supported`
 * for several (CherryHQ/cherry-studio#18037), `For 'object' type, 'additionalProperties' must be
 * explicitly set to false` (a direct-API parity suite, SYSTEM_PLACEMENT_SOURCE in
 * validate-model-rules.ts) — also for an object node that leaves additionalProperties out, as
 * that suite measured ("explicitly"): an object is `type: "object"` (alone or in a list) or
 * `properties` without a type. The minItems and $ref wordings are UNCONFIRMED.
 */
const UNSUPPORTED = [
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "maxItems",
] as const;

type Node = Record<string, unknown>;

export function checkOutputSchemas(body: CountTokensRequest): ApiError | null {
  const raw = body as unknown as {
    output_config?: { format?: { schema?: unknown } | null } | null;
    output_format?: { schema?: unknown } | null;
    tools?: readonly Node[] | null;
  };
  const problem =
    schemaProblem(raw.output_config?.format?.schema, "output_config.format.schema") ??
    schemaProblem(raw.output_format?.schema, "output_format.schema") ??
    (raw.tools ?? [])
      .map((tool, index) =>
        tool.strict === true ? schemaProblem(tool.input_schema, `tools.${index}.custom`) : null,
      )
      .find((found) => found !== null) ??
    null;
  return problem === null ? null : invalidRequest(problem);
}

/** A node's `type` as the API names it in a 400 (the first non-null one of a type list). */
function typeName(node: Node): string {
  const type = node.type;
  if (typeof type === "string") return type;
  if (Array.isArray(type)) return String(type.find((t) => t !== "null") ?? type[0]);
  return "object";
}

/** The first unsupported part of `schema` as the 400's message, or null. */
function schemaProblem(schema: unknown, at: string): string | null {
  if (!isNode(schema)) return null;
  const root = schema;
  const walk = (node: unknown, path: string, refs: readonly string[]): string | null => {
    if (!isNode(node)) return null;
    const ref = node.$ref;
    if (typeof ref === "string") {
      if (!ref.startsWith("#"))
        return `${path}: external $ref '${ref}' is not supported in structured outputs`;
      if (refs.includes(ref))
        return `${path}: recursive schemas are not supported in structured outputs ($ref '${ref}')`;
      const target = resolvePointer(root, ref);
      if (target !== undefined) {
        const inner = walk(target, path, [...refs, ref]);
        if (inner !== null) return inner;
      }
    }
    const unsupported = UNSUPPORTED.filter((keyword) => keyword in node).sort();
    if (unsupported.length === 1) {
      return `${at}: For '${typeName(node)}' type, property '${unsupported[0]}' is not supported`;
    }
    if (unsupported.length > 1) {
      return `${at}: For '${typeName(node)}' type, properties ${unsupported.join(", ")} are not supported`;
    }
    if (typeof node.minItems === "number" && node.minItems > 1) {
      return `${path}: 'minItems' ${node.minItems} is not supported in structured outputs (only 0 or 1)`;
    }
    if (isObjectNode(node) && node.additionalProperties !== false) {
      return `${at}: For 'object' type, 'additionalProperties' must be explicitly set to false`;
    }
    for (const [key, child] of children(node)) {
      const found = walk(child, `${path}.${key}`, refs);
      if (found !== null) return found;
    }
    return null;
  };
  return walk(schema, at, []);
}

/** An object node: `type` "object" (alone or in a type list), or `properties` without a type. */
function isObjectNode(node: Node): boolean {
  const type = node.type;
  if (type === "object") return true;
  if (Array.isArray(type)) return type.includes("object");
  return type === undefined && "properties" in node;
}

/** Subschemas of a node, with the path step that names each. */
function children(node: Node): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const key of ["properties", "$defs", "definitions", "patternProperties"]) {
    const map = node[key];
    if (isNode(map)) for (const [name, child] of Object.entries(map)) out.push([`${key}.${name}`, child]);
  }
  for (const key of ["anyOf", "allOf", "oneOf", "prefixItems"]) {
    const list = node[key];
    if (!Array.isArray(list)) continue;
    for (const [index, child] of list.entries()) out.push([`${key}.${index}`, child]);
  }
  if (Array.isArray(node.items)) {
    for (const [index, child] of node.items.entries()) out.push([`items.${index}`, child]);
  } else if (node.items !== undefined) {
    out.push(["items", node.items]);
  }
  if (node.not !== undefined) out.push(["not", node.not]);
  return out;
}

/** `#/$defs/a` (JSON pointer within the schema); undefined when it points nowhere. */
function resolvePointer(root: Node, ref: string): unknown {
  if (ref === "#") return root;
  const steps = ref
    .replace(/^#\/?/, "")
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  let at: unknown = root;
  for (const step of steps) {
    if (!isNode(at) && !Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[step];
  }
  return at;
}

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
