import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allowlistMarkdown, loadAllowlist } from "../support/allowlist.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const README = join(ROOT, "packages", "sdk", "README.md");
const SOURCE = "test/conformance/agent-sdk/allowlist.json";
const BEGIN = "<!-- conformance:begin -->";
const END = "<!-- conformance:end -->";

describe("R-K2: the README's differences from the Agent SDK are the allowlist's", () => {
  it("R-K2: packages/sdk/README.md's generated section matches allowlist.json (CONFORMANCE_WRITE_README=1 rewrites it)", () => {
    const readme = readFileSync(README, "utf8");
    const start = readme.indexOf(BEGIN);
    const end = readme.indexOf(END);
    expect(start, `${README} needs ${BEGIN} … ${END}`).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    const generated = allowlistMarkdown(loadAllowlist(join(ROOT, SOURCE)), SOURCE);
    if (process.env.CONFORMANCE_WRITE_README === "1") {
      writeFileSync(README, `${readme.slice(0, start + BEGIN.length)}\n${generated}\n${readme.slice(end)}`);
    }
    const current = readFileSync(README, "utf8");
    expect(current.slice(current.indexOf(BEGIN) + BEGIN.length, current.indexOf(END)).trim()).toBe(generated);
  });
});
