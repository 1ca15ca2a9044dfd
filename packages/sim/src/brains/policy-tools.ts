import { basename } from "node:path";
import { exampleForSchema } from "../json-schema-example.js";
import type { MessagesRequest } from "../request-schema.js";
import type { ReplyBlock } from "../types.js";

type ToolUse = Extract<ReplyBlock, { type: "tool_use" }>;

/** The tools the built-in policy knows how to use, found in the request's `tools`. */
export interface PolicyTools {
  /** `Read`, else the first tool whose input schema has `file_path` or `path`. */
  read: { name: string; call(path: string): ToolUse } | null;
  /** `Agent` or `Task` (a sub-agent per call). */
  agent: { name: string; call(path: string): ToolUse } | null;
  glob: { name: string } | null;
  edit: { name: string } | null;
}

type ToolDef = NonNullable<MessagesRequest["tools"]>[number];

export function findTools(body: MessagesRequest): PolicyTools {
  const tools = body.tools ?? [];
  const named = (...names: string[]) => tools.find((t) => names.includes(t.name)) ?? null;
  const readTool = named("Read") ?? tools.find((t) => fieldOf(t) !== null) ?? null;
  const field = readTool ? (fieldOf(readTool) ?? "file_path") : "file_path";
  const agentTool = named("Agent", "Task");
  return {
    read: readTool && {
      name: readTool.name,
      call: (path) => ({ type: "tool_use", name: readTool.name, input: { [field]: path } }),
    },
    agent: agentTool && {
      name: agentTool.name,
      call: (path) => ({
        type: "tool_use",
        name: agentTool.name,
        input: withRequired(agentTool, {
          description: `Summarize ${basename(path)}`,
          prompt: `Summarize ${path}`,
        }),
      }),
    },
    glob: named("Glob"),
    edit: named("Edit"),
  };
}

/**
 * The input plus every other field the tool's schema requires: Claude Code's Task tool requires
 * `subagent_type` (its default agent is "general-purpose"); others get a value generated from
 * their schema, so the client's input validation accepts the call.
 */
function withRequired(tool: ToolDef, input: Record<string, unknown>): Record<string, unknown> {
  const schema = "input_schema" in tool ? (tool.input_schema as Record<string, unknown>) : {};
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const out = { ...input };
  for (const key of required) {
    if (key in out) continue;
    const enumValues = properties[key]?.enum;
    out[key] =
      key === "subagent_type" && !Array.isArray(enumValues)
        ? "general-purpose"
        : exampleForSchema(properties[key] ?? {});
  }
  return out;
}

function fieldOf(tool: ToolDef): string | null {
  const schema = "input_schema" in tool ? (tool.input_schema as { properties?: unknown }) : null;
  const properties = schema?.properties;
  if (!properties || typeof properties !== "object") return null;
  if ("file_path" in properties) return "file_path";
  if ("path" in properties) return "path";
  return null;
}
