import { createRequire } from "node:module";
import type TurndownService from "turndown";

/**
 * A fetched page as text for the model (R-T6): HTML becomes Markdown (turndown, as Claude Code's
 * WebFetch does; scripts, styles and other non-content elements dropped), text types stay as
 * they are; anything else is not text. string: why the page cannot be shown.
 */
export function pageText(body: Buffer, contentType: string): { text: string } | { refused: string } {
  const [mime = "", ...parameters] = contentType
    .toLowerCase()
    .split(";")
    .map((part) => part.trim());
  const isHtml = mime === "text/html" || mime === "application/xhtml+xml";
  const isText =
    isHtml ||
    mime.startsWith("text/") ||
    mime === "" ||
    /^application\/([\w.+-]+\+)?(json|xml|javascript|x-ndjson|yaml|x-yaml|toml)$/.test(mime);
  if (!isText) {
    return {
      refused: `The URL is ${mime} (${body.length} bytes), not a text page; WebFetch reads HTML and text.`,
    };
  }
  // A NUL byte in the first 8 KiB: binary whatever the header says (an untyped download).
  if (body.subarray(0, 8192).includes(0)) {
    return { refused: `The URL's content is binary (${body.length} bytes); WebFetch reads HTML and text.` };
  }
  const charset = parameters.find((parameter) => parameter.startsWith("charset="))?.slice("charset=".length);
  let decoded: string;
  try {
    decoded = new TextDecoder(charset?.replace(/"/g, "") || "utf-8").decode(body);
  } catch {
    decoded = new TextDecoder("utf-8").decode(body);
  }
  if (!isHtml && !/^\s*<(!doctype html|html)[\s>]/i.test(decoded)) return { text: decoded };
  return { text: htmlToMarkdown(decoded) };
}

let service: TurndownService | undefined;

function htmlToMarkdown(html: string): string {
  if (service === undefined) {
    // Loaded at the first page, not with the package: importing forkloop stays light (R-V2).
    const Turndown = createRequire(import.meta.url)("turndown") as typeof TurndownService;
    service = new Turndown({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
    service.remove(["script", "style", "noscript", "iframe", "object", "embed", "template", "head"]);
  }
  return service.turndown(html).trim();
}
