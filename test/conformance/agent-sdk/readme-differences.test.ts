import { describe, expect, it } from "vitest";
import { readmeSection } from "../support/readme-section.js";

describe("R-K2: the README's differences from the Agent SDK are the allowlist's", () => {
  it("R-K2: packages/sdk/README.md's generated section matches allowlist.json (CONFORMANCE_WRITE_README=1 rewrites it)", () => {
    const { current, generated } = readmeSection(
      "packages/sdk/README.md",
      "test/conformance/agent-sdk/allowlist.json",
      process.env.CONFORMANCE_WRITE_README === "1",
    );
    expect(current).toBe(generated);
  });
});
