import type { RequestBody } from "./conversation-text.js";
import type { Difference } from "./differences.js";

/** A tool as a request sends it: its name and the JSON schema of its input. */
interface ToolDefinition {
  name: string;
  input_schema?: { properties?: Record<string, unknown>; required?: readonly string[] };
}

/**
 * The input schema of every tool both sides sent for one role, compared property by property:
 * which properties each side has, each property's JSON type, and which are required. A tool's
 * schema is taken from the first request of the role that carries it — not only the first
 * request: Claude Code sends a tool it defers behind ToolSearch (`defer_loading`) only after the
 * model loaded it, so a later request is where its schema shows. Where a tool is placed (in the
 * first request, or deferred) is not compared here; the tool names are (compare-requests.ts).
 *
 * Codes: `request.tool-schema.{missing,extra} <role> <Tool>.<property>` (a property only the
 * peer / only forkloop has), `request.tool-schema.type <role> <Tool>.<property>`,
 * `request.tool-schema.required <role> <Tool>`.
 */
export function compareToolSchemas(
  role: string,
  peer: readonly RequestBody[],
  forkloop: readonly RequestBody[],
  out: Difference[],
): void {
  const a = schemasOf(peer);
  const b = schemasOf(forkloop);
  for (const [name, x] of a) {
    const y = b.get(name);
    if (y === undefined) continue;
    const px = x.input_schema?.properties ?? {};
    const py = y.input_schema?.properties ?? {};
    for (const key of Object.keys(px)) {
      if (!(key in py)) {
        out.push({
          code: `request.tool-schema.missing ${role} ${name}.${key}`,
          detail: `peer: ${typeOf(px[key])}`,
        });
        continue;
      }
      const tx = typeOf(px[key]);
      const ty = typeOf(py[key]);
      if (tx !== ty)
        out.push({
          code: `request.tool-schema.type ${role} ${name}.${key}`,
          detail: `peer: ${tx}\nforkloop: ${ty}`,
        });
    }
    for (const key of Object.keys(py)) {
      if (!(key in px))
        out.push({
          code: `request.tool-schema.extra ${role} ${name}.${key}`,
          detail: `forkloop: ${typeOf(py[key])}`,
        });
    }
    const rx = [...(x.input_schema?.required ?? [])].sort();
    const ry = [...(y.input_schema?.required ?? [])].sort();
    if (rx.join(",") !== ry.join(",")) {
      out.push({
        code: `request.tool-schema.required ${role} ${name}`,
        detail: `peer: ${rx.join(", ") || "-"}\nforkloop: ${ry.join(", ") || "-"}`,
      });
    }
  }
}

function schemasOf(bodies: readonly RequestBody[]): Map<string, ToolDefinition> {
  const schemas = new Map<string, ToolDefinition>();
  for (const body of bodies) {
    for (const tool of (body.tools ?? []) as readonly ToolDefinition[]) {
      if (!schemas.has(tool.name) && tool.input_schema !== undefined) schemas.set(tool.name, tool);
    }
  }
  return schemas;
}

/** A property's JSON type as a word: `string`, `array`, `string|null` for a union, `any` when it has none. */
function typeOf(property: unknown): string {
  if (property === null || typeof property !== "object") return "any";
  const schema = property as { type?: string | readonly string[]; anyOf?: readonly unknown[] };
  if (typeof schema.type === "string") return schema.type;
  if (Array.isArray(schema.type)) return [...schema.type].sort().join("|");
  if (Array.isArray(schema.anyOf)) return [...new Set(schema.anyOf.map(typeOf))].sort().join("|");
  return "any";
}
