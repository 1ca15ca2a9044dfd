import { z } from "zod";
import { contextManagementSchema } from "./context-edits-schema.js";

/**
 * The Messages API request body (api doc §1), as loose objects: unknown (beta) fields are
 * accepted and kept, like the API does. Semantic rules live in validate-request.ts.
 */
const cacheControl = z.object({
  type: z.literal("ephemeral"),
  ttl: z.enum(["5m", "1h"]).optional(),
});

const text = z.looseObject({
  type: z.literal("text"),
  text: z.string(),
  cache_control: cacheControl.nullish(),
  citations: z.array(z.unknown()).nullish(),
});

const image = z.looseObject({
  type: z.literal("image"),
  source: z.looseObject({ type: z.string() }),
  cache_control: cacheControl.nullish(),
});

const document = z.looseObject({
  type: z.literal("document"),
  source: z.looseObject({ type: z.string() }),
  cache_control: cacheControl.nullish(),
});

const toolUse = z.looseObject({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl.nullish(),
});

const toolResult = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.union([text, image, document]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl.nullish(),
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
const opaque = z.looseObject({
  type: z.enum([
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "search_result",
    "container_upload",
    "compaction",
    "mcp_tool_use",
    "mcp_tool_result",
  ]),
  cache_control: cacheControl.nullish(),
});

export const contentBlockSchema = z.discriminatedUnion("type", [
  text,
  image,
  document,
  toolUse,
  toolResult,
  thinking,
  redactedThinking,
  opaque,
]);

const messageSchema = z.looseObject({
  role: z.enum(["user", "assistant", "system"]),
  content: z.union([z.string(), z.array(contentBlockSchema)]),
});

const customTool = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal("object") }),
  cache_control: cacheControl.nullish(),
  strict: z.boolean().optional(),
});

// Versioned server/client tools (`bash_20250124`, `memory_20250818`, …) carry a `type`.
const versionedTool = z.looseObject({
  type: z.string().regex(/_\d{8}$/),
  name: z.string().min(1),
  cache_control: cacheControl.nullish(),
});

const thinkingConfig = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("enabled"), budget_tokens: z.number().int() }),
  z.looseObject({ type: z.literal("adaptive") }),
  z.looseObject({ type: z.literal("disabled") }),
  z.looseObject({ type: z.literal("between_tools") }),
]);

const toolChoice = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({
    type: z.literal("tool"),
    name: z.string(),
    disable_parallel_tool_use: z.boolean().optional(),
  }),
  z.looseObject({ type: z.literal("none") }),
]);

/** Structured outputs: the reply's text is JSON valid for `schema` (issue 18 item 1). */
const outputFormat = z.looseObject({
  type: z.literal("json_schema"),
  schema: z.record(z.string(), z.unknown()),
});

const outputConfig = z.looseObject({
  effort: z.string().optional(),
  format: outputFormat.nullish(),
});

const commonFields = {
  model: z.string(),
  messages: z.array(messageSchema),
  system: z.union([z.string(), z.array(text)]).optional(),
  tools: z.array(z.union([customTool, versionedTool])).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinkingConfig.optional(),
  cache_control: cacheControl.nullish(),
  // Beta (api doc §9): accepted on /v1/messages and count_tokens (SDK 1.14 has it on both).
  context_management: contextManagementSchema.nullish(),
  output_config: outputConfig.nullish(),
  // The structured-outputs beta's name for `output_config.format`.
  output_format: outputFormat.nullish(),
};

export const messagesRequestSchema = z.looseObject({
  ...commonFields,
  max_tokens: z.number().int().nonnegative(),
  stream: z.boolean().optional(),
  stop_sequences: z.array(z.string()).optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  top_k: z.number().int().optional(),
  diagnostics: z.looseObject({ previous_message_id: z.string().nullish() }).nullish(),
});

export const countTokensRequestSchema = z.looseObject(commonFields);

export type MessagesRequest = z.infer<typeof messagesRequestSchema>;
export type CountTokensRequest = z.infer<typeof countTokensRequestSchema>;
export type ContentBlockParam = z.infer<typeof contentBlockSchema>;
export type MessageParam = z.infer<typeof messageSchema>;
export type CacheControl = z.infer<typeof cacheControl>;

/** Renders a zod issue in the API's style: `messages.0.content.0.text: Field required`. */
export function describeIssue(issue: z.core.$ZodIssue, prefix: readonly PropertyKey[] = []): string {
  const path = [...prefix, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    // Report the branch that got furthest (e.g. the block array rather than the string form).
    const deepest = issue.errors
      .flat()
      .reduce<z.core.$ZodIssue | null>(
        (best, i) => (best === null || i.path.length > best.path.length ? i : best),
        null,
      );
    if (deepest && deepest.path.length > 0) return describeIssue(deepest, path);
  }
  let message = issue.message;
  if (issue.code === "invalid_type") {
    message = issue.input === undefined ? "Field required" : `Input should be a valid ${issue.expected}`;
  } else if (issue.code === "invalid_value") {
    const values = issue.values.map((v) => `'${String(v)}'`);
    message = `Input should be ${values.length > 1 ? `${values.slice(0, -1).join(", ")} or ${values.at(-1)}` : values[0]}`;
  } else if (issue.code === "invalid_union") {
    message = "Input tag does not match any of the expected tags";
  } else if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0];
    return `${[...path, ...(key ? [key] : [])].map(String).join(".")}: Extra inputs are not permitted`;
  }
  const text = path.map(String).join(".");
  return text ? `${text}: ${message}` : message;
}
