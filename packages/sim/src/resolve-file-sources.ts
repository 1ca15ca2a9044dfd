import { type ApiError, invalidRequest, isApiError } from "./api-error.js";
import type { FileLookup } from "./files.js";
import type { ContentBlockParam, CountTokensRequest } from "./request-schema.js";

/** Which stored types each block takes (Files guide, "File types and content blocks"). */
const DOCUMENT_TYPES = new Set(["application/pdf", "text/plain"]);
const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

export type Resolution<B> = { ok: true; body: B } | { ok: false; error: ApiError };

/**
 * Resolves the `file_id` sources of a request (R-D4; Files guide, "Using a file in messages"
 * and "Error handling"): an id this API key cannot see (or deleted) is a 404, an expired file's
 * content is gone (404 `file_expired`), and a file must fit its block — PDF or plain text in a
 * `document`, one of the four image types in an `image` (400 "Invalid file type"; wordings
 * UNCONFIRMED). A `container_upload` takes any file. A plain-text document's source becomes its
 * text, so counting, caching, citations and the brain read the file as the model would; PDFs
 * and images stay references (counted like their base64 forms).
 */
export function resolveFileSources<B extends CountTokensRequest>(body: B, lookup: FileLookup): Resolution<B> {
  let changed = false;
  const messages: B["messages"] = [];
  for (const [m, message] of body.messages.entries()) {
    if (typeof message.content === "string") {
      messages.push(message);
      continue;
    }
    const content: ContentBlockParam[] = [];
    for (const [c, block] of message.content.entries()) {
      const resolved = resolveBlock(block, `messages.${m}.content.${c}`, lookup);
      if (isApiError(resolved)) return { ok: false, error: resolved };
      changed ||= resolved !== block;
      content.push(resolved);
    }
    messages.push({ ...message, content });
  }
  return { ok: true, body: changed ? { ...body, messages } : body };
}

function resolveBlock(
  block: ContentBlockParam,
  path: string,
  lookup: FileLookup,
): ContentBlockParam | ApiError {
  if (block.type === "tool_result" && Array.isArray(block.content)) {
    let changed = false;
    const inner: typeof block.content = [];
    for (const [i, each] of block.content.entries()) {
      const resolved = resolveBlock(each, `${path}.content.${i}`, lookup);
      if (isApiError(resolved)) return resolved;
      changed ||= resolved !== each;
      inner.push(resolved as (typeof block.content)[number]);
    }
    return changed ? { ...block, content: inner } : block;
  }
  if (block.type === "container_upload") {
    const file = lookup(block.file_id);
    return isApiError(file) ? file : block;
  }
  if ((block.type !== "document" && block.type !== "image") || block.source.type !== "file") return block;
  const file = lookup(block.source.file_id);
  if (isApiError(file)) return file;
  const fits = block.type === "document" ? DOCUMENT_TYPES : IMAGE_TYPES;
  if (!fits.has(file.meta.mime_type)) {
    return invalidRequest(
      `${path}.${block.type}.source.file: The file ${file.meta.id} has type ${file.meta.mime_type}, which cannot be used in a${block.type === "image" ? "n" : ""} ${block.type} block (${[...fits].join(", ")}).`,
    );
  }
  if (block.type === "document" && file.meta.mime_type === "text/plain") {
    return {
      ...block,
      source: { type: "text", media_type: "text/plain", data: file.bytes.toString("utf8") },
    };
  }
  return block;
}
