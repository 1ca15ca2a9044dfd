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
 * dropped (the API refuses them). `structuredContent` stands in when there is no content (a
 * successful result's is shown instead of its content: mcp-tool.ts).
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
  // The API checks the bytes against media_type and refuses the whole request on a mismatch,
  // and the result stays in the history: one server's mislabelled image would fail every later
  // turn. The bytes decide the type; data that is none of the four is a note.
  const actual = sniffImageType(data);
  if (actual === undefined) {
    return text(
      `[image (${mimeType}, ${bytes} bytes) not shown: its data is not a jpeg, png, gif or webp image]`,
    );
  }
  return { type: "image", source: { type: "base64", media_type: actual, data } };
}

type ApiImageType = "image/jpeg" | "image/png" | "image/gif" | "image/webp";

/** The image type the first bytes (magic numbers) say, if it is one the API takes. */
function sniffImageType(data: string): ApiImageType | undefined {
  const head = Buffer.from(data.slice(0, 24), "base64");
  const ascii = (start: number, end: number) => head.subarray(start, end).toString("latin1");
  if (head[0] === 0x89 && ascii(1, 4) === "PNG") return "image/png";
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "image/jpeg";
  if (ascii(0, 4) === "GIF8") return "image/gif";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp";
  return undefined;
}

function text(value: string): ResultBlock {
  return { type: "text", text: value };
}

function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
