import type { ContentBlockParam } from "@forkloop/loop-core";
import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";

/** The image types the Messages API accepts in a tool_result. */
const API_IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);
/** The API refuses a larger image with a 400 that would end the turn (R-L6 `image_error`). */
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

type ResultBlock = Extract<ContentBlockParam, { type: "text" } | { type: "image" }>;

/**
 * An MCP tool result as tool_result content: text stays text, images become image blocks (what
 * the model can see), everything else a text line that says what it was. Empty text blocks are
 * dropped (the API refuses them). `structuredContent` is shown only when there is no content,
 * since servers that send both put the same data in `content` (the spec asks them to).
 */
export function toResultBlocks(result: CallToolResult): ResultBlock[] {
  const blocks = result.content.flatMap(toBlocks);
  if (blocks.length === 0 && result.structuredContent !== undefined) {
    return [{ type: "text", text: JSON.stringify(result.structuredContent) }];
  }
  return blocks.filter((block) => block.type !== "text" || block.text.length > 0);
}

function toBlocks(block: ContentBlock): ResultBlock[] {
  switch (block.type) {
    case "text":
      return [{ type: "text", text: block.text }];
    case "image":
      return [image(block.data, block.mimeType)];
    case "audio":
      return [
        text(
          `[audio (${block.mimeType}, ${base64Bytes(block.data)} bytes) not shown: audio is not supported]`,
        ),
      ];
    case "resource_link":
      return [
        text(
          `[resource link: ${block.name} ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ""}]${block.description ? ` ${block.description}` : ""}`,
        ),
      ];
    case "resource": {
      const resource = block.resource;
      if ("text" in resource) return [text(`[resource ${resource.uri}]\n${resource.text}`)];
      if (resource.mimeType !== undefined && API_IMAGE_TYPES.has(resource.mimeType)) {
        return [image(resource.blob, resource.mimeType)];
      }
      return [
        text(
          `[resource ${resource.uri} (${resource.mimeType ?? "binary"}, ${base64Bytes(resource.blob)} bytes) not shown]`,
        ),
      ];
    }
    default: {
      const unknown: { type: string } = block;
      return [text(`[${unknown.type} content not shown]`)];
    }
  }
}

function image(data: string, mimeType: string): ResultBlock {
  if (!API_IMAGE_TYPES.has(mimeType)) {
    return text(
      `[image (${mimeType}, ${base64Bytes(data)} bytes) not shown: the API takes jpeg, png, gif and webp]`,
    );
  }
  const bytes = base64Bytes(data);
  if (bytes > MAX_IMAGE_BYTES) {
    return text(`[image (${mimeType}, ${bytes} bytes) not shown: the API takes images up to 5 MB]`);
  }
  return {
    type: "image",
    source: { type: "base64", media_type: mimeType as "image/png", data },
  };
}

function text(value: string): ResultBlock {
  return { type: "text", text: value };
}

function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
