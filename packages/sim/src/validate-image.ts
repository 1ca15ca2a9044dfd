import { type ApiError, invalidRequest } from "./api-error.js";
import type { ContentBlockParam } from "./request-schema.js";

/** The API's per-image limit; clients withhold and recover from this error (SPEC R-L9). */
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** Magic bytes of the four image types the API takes (R-D2). */
const SIGNATURES: readonly { mediaType: string; matches: (b: Buffer) => boolean }[] = [
  { mediaType: "image/jpeg", matches: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { mediaType: "image/png", matches: (b) => b.subarray(0, 8).equals(Buffer.from("89504e470d0a1a0a", "hex")) },
  { mediaType: "image/gif", matches: (b) => /^GIF8[79]a/.test(b.subarray(0, 6).toString("latin1")) },
  {
    mediaType: "image/webp",
    matches: (b) =>
      b.subarray(0, 4).toString("latin1") === "RIFF" && b.subarray(8, 12).toString("latin1") === "WEBP",
  },
];

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The image type whose magic bytes `head` starts with, if any of the four. */
export function imageMediaTypeOf(head: Buffer): string | undefined {
  return SIGNATURES.find((s) => s.matches(head))?.mediaType;
}

/**
 * A base64 image must decode, be at most 5 MB and start with the magic bytes of its declared
 * media type; also inside tool results. `path` is the block's tagged path
 * (`messages.0.content.1.image`). The size wording is the API's (gptme/gptme#185 quotes
 * `messages.58.content.2.image.source.base64: image exceeds 5 MB maximum: …`); so is the mismatch
 * wording, at `…image.source.base64` (vybestack/llxprt-code#2130 quotes
 * `messages.83.content.0.tool_result.content.1.image.source.base64: The image was specified using
 * the image/jpeg media type, but the image appears to be a image/png image`). Bytes of no known
 * type get the API's bare `Could not process image`, without a path (anthropics/claude-code#56511
 * and its duplicates quote that body). The base64 wording is UNCONFIRMED.
 */
export function checkImage(block: ContentBlockParam, path: string): ApiError | null {
  if (block.type === "tool_result" && Array.isArray(block.content)) {
    for (const [i, inner] of block.content.entries()) {
      const error = checkImage(inner, `${path}.content.${i}.${inner.type}`);
      if (error) return error;
    }
    return null;
  }
  if (block.type !== "image" || block.source.type !== "base64") return null;
  const { data, media_type: declared } = block.source;
  const at = `${path}.source.base64`;
  if (data.length % 4 !== 0 || !BASE64.test(data)) {
    return invalidRequest(`${at}.data: The image data is not valid base64`);
  }
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  const bytes = (data.length * 3) / 4 - padding;
  if (bytes > MAX_IMAGE_BYTES) {
    return invalidRequest(`${at}: image exceeds 5 MB maximum: ${bytes} bytes > ${MAX_IMAGE_BYTES} bytes`);
  }
  const head = Buffer.from(data.slice(0, 16), "base64");
  if (SIGNATURES.find((s) => s.mediaType === declared)?.matches(head)) return null;
  const actual = imageMediaTypeOf(head);
  return invalidRequest(
    actual
      ? `${at}: The image was specified using the ${declared} media type, but the image appears to be a ${actual} image`
      : "Could not process image",
  );
}
