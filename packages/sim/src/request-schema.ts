import { z } from "zod";
import { contextManagementSchema } from "./context-edits-schema.js";

/**
 * The Messages API request body (api doc §1, SDK 1.14's `MessageCreateParams` and the 0.x
 * fields clients still send), as strict objects: the API answers an unknown key anywhere with
 * `<path>: Extra inputs are not permitted` (R-D2). Blocks the simulator only passes
 * through (server-tool results, MCP, compaction) keep their other keys unchecked. Semantic rules
 * live in validate-*.ts; issue wording (pydantic style, union-tagged paths) in schema-issues.ts.
 */
const cacheControl = z.strictObject({
  type: z.literal("ephemeral"),
  ttl: z.enum(["5m", "1h"]).optional(),
});

/** An integer field; zod reports a non-number given to it as "expected number", the API as this. */
const integer = () =>
  z.int({
    error: (issue) => (issue.code === "invalid_type" ? "Input should be a valid integer" : undefined),
  });

/** Tool names and tool_use ids (the API's patterns). */
const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,128}$/;
const TOOL_USE_ID_PATTERN = /^[a-zA-Z0-9_-]+$/;

const text = z.strictObject({
  type: z.literal("text"),
  text: z.string(),
  cache_control: cacheControl.nullish(),
  citations: z.array(z.looseObject({ type: z.string() })).nullish(),
});

const imageSource = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("base64"),
    media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]),
    data: z.string(),
  }),
  z.strictObject({ type: z.literal("url"), url: z.string() }),
  z.strictObject({ type: z.literal("file"), file_id: z.string() }),
]);

const image = z.strictObject({
  type: z.literal("image"),
  source: imageSource,
  cache_control: cacheControl.nullish(),
  // Vision page / the SDK's ImageTransformationsParam: what the server does with an image over
  // the size limit, `"downsize"` (the default) or `"error"` (validate-image-dimensions.ts).
  transformations: z.strictObject({ oversized_image: z.enum(["downsize", "error"]).optional() }).nullish(),
});

const documentSource = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("base64"), media_type: z.literal("application/pdf"), data: z.string() }),
  z.strictObject({ type: z.literal("text"), media_type: z.literal("text/plain"), data: z.string() }),
  z.strictObject({
    type: z.literal("content"),
    content: z.union([z.string(), z.array(z.discriminatedUnion("type", [text, image]))]),
  }),
  z.strictObject({ type: z.literal("url"), url: z.string() }),
  z.strictObject({ type: z.literal("file"), file_id: z.string() }),
]);

const document = z.strictObject({
  type: z.literal("document"),
  source: documentSource,
  cache_control: cacheControl.nullish(),
  citations: z.strictObject({ enabled: z.boolean().optional() }).nullish(),
  context: z.string().nullish(),
  title: z.string().nullish(),
});

const searchResult = z.strictObject({
  type: z.literal("search_result"),
  source: z.string(),
  title: z.string(),
  content: z.array(text),
  cache_control: cacheControl.nullish(),
  citations: z.strictObject({ enabled: z.boolean().optional() }).nullish(),
});

/** `caller` comes back on tool_use blocks of responses, and clients echo it. */
const caller = z.looseObject({ type: z.string() }).optional();

const toolUse = z.strictObject({
  type: z.literal("tool_use"),
  id: z.string().regex(TOOL_USE_ID_PATTERN),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl.nullish(),
  caller,
  toolset_name: z.string().nullish(),
});

/** A custom tool search's answer: the deferred tool it loads (tool search tool page). */
const toolReference = z.strictObject({
  type: z.literal("tool_reference"),
  tool_name: z.string(),
  cache_control: cacheControl.nullish(),
});

const toolResult = z.strictObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string().regex(TOOL_USE_ID_PATTERN),
  content: z
    .union([
      z.string(),
      z.array(z.discriminatedUnion("type", [text, image, document, searchResult, toolReference])),
    ])
    .optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl.nullish(),
  toolset_name: z.string().nullish(),
});

// A thinking block has no cache_control field: the API rejects one as an extra input (§5).
const thinking = z.strictObject({
  type: z.literal("thinking"),
  thinking: z.string(),
  signature: z.string(),
});

const redactedThinking = z.strictObject({
  type: z.literal("redacted_thinking"),
  data: z.string(),
});

/** Server-side and beta blocks the simulator does not interpret but must accept when sent back. */
const passThrough = <T extends string>(type: T) =>
  z.looseObject({ type: z.literal(type), cache_control: cacheControl.nullish() });

export const SERVER_BLOCK_TYPES = [
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
  "mcp_tool_use",
  "mcp_tool_result",
] as const;

export const contentBlockSchema = z.discriminatedUnion("type", [
  text,
  image,
  document,
  searchResult,
  // Only inside a tool_result; as a message's own block it is refused as an unknown tag (validate-content).
  toolReference,
  toolUse,
  toolResult,
  thinking,
  redactedThinking,
  z.strictObject({
    type: z.literal("container_upload"),
    file_id: z.string(),
    cache_control: cacheControl.nullish(),
  }),
  passThrough("compaction"),
  ...SERVER_BLOCK_TYPES.map(passThrough),
]);

/** Per-message effort on a `role: "system"` message (effort per message page, beta). */
const messageOutputConfig = z.strictObject({
  effort: z.enum(["low", "medium", "high", "xhigh", "max"]).nullish(),
});

const messageSchema = z.strictObject({
  role: z.enum(["user", "assistant", "system"]),
  content: z.union([z.string(), z.array(contentBlockSchema)]),
  output_config: messageOutputConfig.optional(),
  /** How long a system message's text is shown (SDK 1.14's BetaSystemMessageParam; beta). */
  clear_at: z.enum(["next_user_message", "never"]).nullish(),
});

/** A custom tool (`type` absent or "custom"); versioned tools are checked in validate-tools.ts. */
export const customToolSchema = z.strictObject({
  type: z.literal("custom").nullish(),
  // An empty name is a length fault first (the parity suite: `String should have at least 1 character`).
  name: z.string().min(1).regex(TOOL_NAME_PATTERN),
  description: z.string().optional(),
  input_schema: z.looseObject({
    type: z.literal("object"),
    properties: z.record(z.string(), z.unknown()).nullish(),
    required: z.array(z.string()).nullish(),
  }),
  cache_control: cacheControl.nullish(),
  strict: z.boolean().optional(),
  eager_input_streaming: z.boolean().nullish(),
  defer_loading: z.boolean().optional(),
  allowed_callers: z
    .array(
      z.enum(["direct", "code_execution_20250825", "code_execution_20260120", "code_execution_20260521"]),
    )
    .optional(),
  input_examples: z.array(z.record(z.string(), z.unknown())).optional(),
});

/** Server and client tools with a version in their type (`web_search_20250305`, `bash_20250124`…). */
const versionedToolSchema = z.looseObject({
  type: z.string(),
  name: z.string(),
  cache_control: cacheControl.nullish(),
  defer_loading: z.boolean().optional(),
});

const budget = integer();
const display = z.enum(["summarized", "omitted", "updates"]).nullish();

const thinkingConfig = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("enabled"), budget_tokens: budget, display }),
  z.strictObject({ type: z.literal("adaptive"), display, block_binding: z.looseObject({}).optional() }),
  z.strictObject({ type: z.literal("disabled") }),
  z.strictObject({ type: z.literal("between_tools"), display }),
]);

const parallel = z.boolean().optional();
const toolChoice = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("auto"), disable_parallel_tool_use: parallel }),
  z.strictObject({ type: z.literal("any"), disable_parallel_tool_use: parallel }),
  z.strictObject({ type: z.literal("tool"), name: z.string(), disable_parallel_tool_use: parallel }),
  z.strictObject({ type: z.literal("none") }),
]);

/** Structured outputs: the reply's text is JSON valid for `schema` (R-D2). */
const outputFormat = z.strictObject({
  type: z.literal("json_schema"),
  schema: z.record(z.string(), z.unknown()),
});

const outputConfig = z.strictObject({
  effort: z.enum(["low", "medium", "high", "xhigh", "max"]).nullish(),
  format: outputFormat.nullish(),
  task_budget: z.looseObject({ type: z.string() }).nullish(),
});

const commonFields = {
  model: z.string().min(1),
  messages: z.array(messageSchema),
  system: z.union([z.string(), z.array(text)]).optional(),
  // Each definition is checked by its tag in validate-tools.ts (a missing `type` means custom).
  tools: z.array(z.custom<ToolDefinition>(isRecord, { message: "Input should be an object" })).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinkingConfig.optional(),
  cache_control: cacheControl.nullish(),
  // null is refused as a wrong shape, as a direct-API parity suite measured (unlike cache_control).
  output_config: outputConfig.optional(),
  speed: z.enum(["standard", "fast"]).nullish(),
  user_profile_id: z.string().optional(),
  workspace_id: z.string().optional(),
  // Beta-only fields (api doc §1); validate-request.ts refuses them without their beta.
  context_management: contextManagementSchema.nullish(),
  /** The structured-outputs beta's name for `output_config.format`. */
  output_format: outputFormat.nullish(),
  mcp_servers: z.array(z.looseObject({ type: z.string() })).nullish(),
};

/** A sampling parameter: a number in [0, 1] (the API's range). */
const unitInterval = z.number().min(0).max(1);

export const messagesRequestSchema = z.strictObject({
  ...commonFields,
  max_tokens: integer().nonnegative(),
  stream: z.boolean().optional(),
  stop_sequences: z.array(z.string()).optional(),
  metadata: z.strictObject({ user_id: z.string().nullish() }).optional(),
  temperature: unitInterval.optional(),
  top_p: unitInterval.optional(),
  top_k: integer().nonnegative().optional(),
  service_tier: z.enum(["auto", "standard_only"]).optional(),
  inference_geo: z.enum(["global", "us"]).nullish(),
  container: z.union([z.string(), z.looseObject({})]).nullish(),
  diagnostics: z.strictObject({ previous_message_id: z.string().nullish() }).nullish(),
});

export const countTokensRequestSchema = z.strictObject(commonFields);

export type MessagesRequest = z.infer<typeof messagesRequestSchema>;
export type CountTokensRequest = z.infer<typeof countTokensRequestSchema>;
export type ContentBlockParam = z.infer<typeof contentBlockSchema>;
export type MessageParam = z.infer<typeof messageSchema>;
export type CacheControl = z.infer<typeof cacheControl>;
export type CustomTool = z.infer<typeof customToolSchema>;
export type VersionedTool = z.infer<typeof versionedToolSchema>;
/** A validated tool definition: custom, or versioned (server / client tools). */
export type ToolDefinition = CustomTool | VersionedTool;

function isRecord(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function tagsOf(union: { options: readonly { shape: { type: { value: unknown } } }[] }): string[] {
  return union.options.map((option) => String(option.shape.type.value));
}

/** The tags each discriminated union accepts, by path pattern (for the API's tag errors). */
export const UNION_TAGS: Readonly<Record<string, readonly string[]>> = {
  "messages.*.content.*": tagsOf(contentBlockSchema),
  "messages.*.content.*.source": [...new Set([...tagsOf(imageSource), ...tagsOf(documentSource)])],
  // Each block has its own source union: the keys name the block's type after `@`.
  "messages.*.content.*.source@image": tagsOf(imageSource),
  "messages.*.content.*.source@document": tagsOf(documentSource),
  "messages.*.content.*.content.*.source@image": tagsOf(imageSource),
  "messages.*.content.*.content.*.source@document": tagsOf(documentSource),
  "messages.*.content.*.source.content.*": ["text", "image"],
  tool_choice: tagsOf(toolChoice),
  thinking: tagsOf(thinkingConfig),
};
