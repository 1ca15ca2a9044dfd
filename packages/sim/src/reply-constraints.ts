import type { JsonSchemaChecker } from "./json-schema-check.js";
import { exampleForSchema } from "./json-schema-example.js";
import type { MessagesRequest } from "./request-schema.js";
import type { BrainReply, ReplyBlock, StopReason } from "./types.js";

type ToolUseBlock = Extract<ReplyBlock, { type: "tool_use" }>;

export interface ConstrainedReply {
  reply: BrainReply;
  /** A forced tool call skips thinking: the response starts with the tool call (api doc §8). */
  forcedToolUse: boolean;
}

/**
 * What the API guarantees about a reply whatever the model would have said (R-D2),
 * applied to every brain's reply:
 * - `tool_choice` `any` / `{type:"tool"}`: only tool calls (of that tool), at least one — when
 *   the brain made none, one is generated from the tool's `input_schema`; `stop_reason` tool_use;
 * - `tool_choice` `none`: no tool calls;
 * - `disable_parallel_tool_use`: at most one tool call;
 * - a `strict: true` tool's input always validates against its schema;
 * - `output_config.format` (and the beta `output_format`): the final text is JSON valid for the
 *   schema — the brain's own text when it already is, else a value generated from the schema.
 */
export function constrainReply(
  reply: BrainReply,
  body: MessagesRequest,
  checker: JsonSchemaChecker,
): ConstrainedReply {
  const choice = body.tool_choice ?? { type: "auto" as const };
  const forced = choice.type === "any" || choice.type === "tool";
  const single = choice.type !== "none" && choice.disable_parallel_tool_use === true;
  const tools = new ToolSchemas(body);
  let blocks: ReplyBlock[] = [];
  let calls = 0;
  for (const block of reply.content) {
    if (block.type !== "tool_use") {
      // Forcing a tool prefills the assistant turn: no text or thinking before the call.
      if (!forced) blocks.push(block);
      continue;
    }
    if (choice.type === "none" || (choice.type === "tool" && block.name !== choice.name)) continue;
    if (single && calls > 0) continue;
    blocks.push(tools.strictInput(block, checker));
    calls++;
  }
  if (forced && calls === 0) {
    const name = choice.type === "tool" ? choice.name : tools.firstCustomName();
    if (name !== null) blocks = [tools.generatedCall(name)];
  }
  const hasCall = blocks.some((b) => b.type === "tool_use");
  const format = outputFormatSchema(body);
  if (format !== undefined && !hasCall) blocks = structuredText(blocks, format, checker);
  if (blocks.length === 0) {
    const text =
      choice.type === "none"
        ? "(forkloop simulator) tool_choice none: answering without a tool call."
        : "(forkloop simulator) no client tool to call: the tools offered run on the server.";
    blocks = [{ type: "text", text }];
  }
  let stopReason: StopReason | undefined = reply.stop_reason;
  if (hasCall && (forced || stopReason === undefined)) stopReason = "tool_use";
  if (!hasCall && stopReason === "tool_use") stopReason = "end_turn";
  return {
    reply: { ...reply, content: blocks, stop_reason: stopReason },
    forcedToolUse: forced && hasCall,
  };
}

/** The schema of `output_config.format` (GA) or the beta's top-level `output_format`. */
export function outputFormatSchema(body: MessagesRequest): unknown {
  const format = body.output_config?.format ?? body.output_format;
  return format?.type === "json_schema" ? format.schema : undefined;
}

/** Thinking stays; the text becomes the brain's JSON when it fits the schema, else a generated value. */
function structuredText(blocks: ReplyBlock[], schema: unknown, checker: JsonSchemaChecker): ReplyBlock[] {
  const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
  let json: string;
  try {
    json = checker.conforms(schema, JSON.parse(text)) ? text : JSON.stringify(exampleForSchema(schema));
  } catch {
    json = JSON.stringify(exampleForSchema(schema));
  }
  return [...blocks.filter((b) => b.type === "thinking"), { type: "text", text: json }];
}

const command = (commands: string[]) => ({ type: "string", enum: commands });
/** Input shapes of the versioned client tools, for a forced call the brain did not make. */
const CLIENT_TOOL_SCHEMAS: Readonly<Record<string, unknown>> = {
  bash: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  text_editor: {
    type: "object",
    properties: { command: command(["view"]), path: { type: "string" } },
    required: ["command", "path"],
  },
  memory: {
    type: "object",
    properties: { command: command(["view"]), path: { const: "/memories" } },
    required: ["command", "path"],
  },
  computer: { type: "object", properties: { action: command(["screenshot"]) }, required: ["action"] },
};

class ToolSchemas {
  readonly #custom = new Map<string, { schema: unknown; strict: boolean }>();

  constructor(body: MessagesRequest) {
    for (const tool of body.tools ?? []) {
      if ("input_schema" in tool) {
        this.#custom.set(tool.name, { schema: tool.input_schema, strict: tool.strict === true });
        continue;
      }
      // Client tools with a version in their type take a fixed input shape (the tool docs).
      const schema = CLIENT_TOOL_SCHEMAS[tool.type.replace(/_\d{8}$/, "")];
      if (schema) this.#custom.set(tool.name, { schema, strict: false });
    }
  }

  /** The first tool a forced `any` may call: a custom tool or a versioned client tool. */
  firstCustomName(): string | null {
    return this.#custom.keys().next().value ?? null;
  }

  generatedCall(name: string): ToolUseBlock {
    return { type: "tool_use", name, input: this.#example(name) };
  }

  /** A strict tool's input is guaranteed to match its schema (structured outputs for tools). */
  strictInput(block: ToolUseBlock, checker: JsonSchemaChecker): ToolUseBlock {
    const tool = this.#custom.get(block.name);
    if (!tool?.strict || checker.conforms(tool.schema, block.input)) return block;
    return { ...block, input: this.#example(block.name) };
  }

  #example(name: string): Record<string, unknown> {
    const value = exampleForSchema(this.#custom.get(name)?.schema ?? { type: "object" });
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  }
}
