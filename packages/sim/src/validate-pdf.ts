import { type ApiError, invalidRequest } from "./api-error.js";
import type { ContentBlockParam } from "./request-schema.js";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const PDF_MAGIC = "%PDF-";

/**
 * A base64 PDF document must decode and start with `%PDF-`, also inside tool results. The API's
 * words, path included (it tags the block `pdf`), as a client reported them
 * (anthropics/claude-code#5174): `messages.2.content.0.pdf.source.base64.data: The PDF specified
 * was not valid.` `path` is the block's untagged path (`messages.0.content.1`).
 */
export function checkPdf(block: ContentBlockParam, path: string): ApiError | null {
  if (block.type === "tool_result" && Array.isArray(block.content)) {
    for (const [i, inner] of block.content.entries()) {
      const error = checkPdf(inner, `${path}.tool_result.content.${i}`);
      if (error) return error;
    }
    return null;
  }
  if (block.type !== "document" || block.source.type !== "base64") return null;
  const { data } = block.source;
  const valid =
    data.length % 4 === 0 &&
    BASE64.test(data) &&
    Buffer.from(data.slice(0, 8), "base64").toString("latin1").startsWith(PDF_MAGIC);
  return valid ? null : invalidRequest(`${path}.pdf.source.base64.data: The PDF specified was not valid.`);
}
