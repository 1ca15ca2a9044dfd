import { type ApiError, invalidRequest } from "./api-error.js";
import type { ContentBlockParam, CountTokensRequest } from "./request-schema.js";

const SERVER_RESULTS = [
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "mcp_tool_use",
  "mcp_tool_result",
] as const;

/** Which block types each role may send (a tool_use in a user message is a client bug). */
const BLOCKS_BY_ROLE: Readonly<Record<"user" | "assistant" | "system", readonly string[]>> = {
  user: ["text", "image", "document", "tool_result", "search_result", "container_upload"],
  assistant: [
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "document",
    "compaction",
    ...SERVER_RESULTS,
  ],
  system: ["text"],
};

export function checkContent(body: CountTokensRequest): ApiError | null {
  const lastIndex = body.messages.length - 1;
  for (const [m, message] of body.messages.entries()) {
    // Empty string and empty block list alike.
    if (message.content.length === 0 && !(m === lastIndex && message.role === "assistant")) {
      return invalidRequest(
        `messages.${m}: all messages must have non-empty content except for the optional final assistant message`,
      );
    }
    if (typeof message.content === "string") continue;
    for (const [b, block] of message.content.entries()) {
      const media = checkMediaSize(block, `messages.${m}.content.${b}`);
      if (media) return media;
      if (block.type === "text" && block.text.length === 0) {
        if (block.cache_control) {
          return invalidRequest(
            `messages.${m}.content.${b}.text: cache_control cannot be set for empty text blocks`,
          );
        }
        return invalidRequest("messages: text content blocks must be non-empty");
      }
      const allowed = BLOCKS_BY_ROLE[message.role];
      if (!allowed.includes(block.type)) {
        // Each role has its own block union in the API, so a misplaced block is an unknown tag.
        return invalidRequest(
          `messages.${m}.content.${b}.type: Input tag '${block.type}' found using 'type' does not match any of the expected tags: ${allowed.map((t) => `'${t}'`).join(", ")}`,
        );
      }
    }
  }
  const system = body.system;
  if (Array.isArray(system)) {
    for (const [i, block] of system.entries()) {
      if (block.text.length === 0 && block.cache_control) {
        return invalidRequest(`system.${i}.text: cache_control cannot be set for empty text blocks`);
      }
    }
  }
  return null;
}

/** The API's per-image limit; clients withhold and recover from this error (SPEC R-L9). */
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

function checkMediaSize(block: ContentBlockParam, path: string): ApiError | null {
  if (block.type === "tool_result" && Array.isArray(block.content)) {
    for (const [i, inner] of block.content.entries()) {
      const error = checkMediaSize(inner, `${path}.content.${i}`);
      if (error) return error;
    }
    return null;
  }
  if (block.type !== "image") return null;
  const source = block.source as { type: string; data?: unknown };
  if (source.type !== "base64" || typeof source.data !== "string") return null;
  const padding = source.data.endsWith("==") ? 2 : source.data.endsWith("=") ? 1 : 0;
  const bytes = Math.floor((source.data.length * 3) / 4) - padding;
  if (bytes <= MAX_IMAGE_BYTES) return null;
  return invalidRequest(
    `${path}.image.source.base64: image exceeds 5 MB maximum: ${bytes} bytes > ${MAX_IMAGE_BYTES} bytes`,
  );
}
