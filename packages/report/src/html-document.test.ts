import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { embeddedJson, renderHtml } from "./html-document.js";
import type { SessionReportData } from "./report-data.js";

const HOSTILE = `</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)> \u2028`;

function data(title: string): SessionReportData {
  return { kind: "session", generatedAt: "2026-01-01T00:00:00.000Z", title, agents: [] };
}

describe("the report page document (R-V1)", () => {
  it("R-V1: embedded JSON never holds a raw `<` (no `</script>`, no `<!--`) and parses back to the same value", () => {
    const text = embeddedJson({ hostile: HOSTILE });
    expect(text).not.toContain("<");
    expect(text).not.toContain("\u2028");
    expect(JSON.parse(text)).toEqual({ hostile: HOSTILE });
  });

  it("R-V1: the page allows only its own script (by hash), no network, and escapes the title", () => {
    const html = renderHtml(data(HOSTILE), { script: "console.log('</script>')", style: "body{}" });
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1] ?? "");
    expect(scripts).toEqual(["console.log('<\\/script>')"]);
    const hash = createHash("sha256")
      .update(scripts[0] ?? "")
      .digest("base64");
    const policy = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? "";
    expect(policy.split("; ")).toEqual([
      "default-src 'none'",
      `script-src 'sha256-${hash}'`,
      "style-src 'unsafe-inline'",
      "img-src data:",
      "base-uri 'none'",
      "form-action 'none'",
    ]);
    expect(html).toContain("<title>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    // The only markup in the page is the document's own: two script elements, one of them data.
    expect(html.match(/<script/g)).toHaveLength(2);
  });
});
