import { describe, expect, it } from "vitest";
import { readmeSection } from "../support/readme-section.js";

describe("R-X1: the CLI README's differences from `claude -p` are the allowlist's", () => {
  it("R-X1: apps/cli/README.md's generated section matches allowlist.json (CONFORMANCE_WRITE_README=1 rewrites it)", () => {
    const { current, generated } = readmeSection(
      "apps/cli/README.md",
      "test/conformance/claude-cli/allowlist.json",
      process.env.CONFORMANCE_WRITE_README === "1",
    );
    expect(current).toBe(generated);
  });
});
