import { createHash } from "node:crypto";
import type { ReportData } from "./report-data.js";

export interface PageAssets {
  /** The page script (Chart.js included), as built by scripts/bundle-page.mjs. */
  readonly script: string;
  readonly style: string;
}

/**
 * JSON that is safe inside `<script type="application/json">`: `<` never appears raw, so a
 * transcript string holding `</script>` or `<!--` cannot end the element or start a comment.
 * U+2028/U+2029 are escaped too (valid JSON, but line terminators to older script parsers).
 */
export function embeddedJson(value: unknown): string {
  return JSON.stringify(value)
    .replaceAll("<", "\\u003c")
    .replaceAll("\u2028", "\\u2028")
    .replaceAll("\u2029", "\\u2029");
}

function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("base64");
}

/**
 * One self-contained page: the data, the script and the style inlined. The Content-Security-Policy
 * allows exactly the page's own script (by hash), inline styles and data: images, and no network
 * at all — so even markup that slipped into the page could neither run nor phone home.
 */
export function renderHtml(data: ReportData, assets: PageAssets): string {
  // A bundled library could hold the text `</script` in a string; `<\/` reads the same to JS.
  const script = assets.script.replace(/<\/(script)/gi, "<\\/$1");
  const style = assets.style.replace(/<\/(style)/gi, "<\\/$1");
  const title = data.kind === "session" ? data.title : `Batch ${data.batchId}`;
  const policy = [
    "default-src 'none'",
    `script-src 'sha256-${sha256(script)}'`,
    "style-src 'unsafe-inline'",
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="forkloop report">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
<noscript>This report draws its charts and tables with JavaScript; allow it for this file.</noscript>
<div id="app"></div>
<script type="application/json" id="report-data">${embeddedJson(data)}</script>
<script>${script}</script>
</body>
</html>
`;
}
