import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runQuery, startHarness } from "./test-support/sdk-harness.js";

type Harness = Awaited<ReturnType<typeof startHarness>>;

// R-S6, R-K2: system/init says whether this run's Bash runs in the sandbox, as Claude Code's
// sandbox_enabled says whether its shell commands run in its own.
let harness: Harness;

beforeAll(async () => {
  harness = await startHarness(() => ({ content: [{ type: "text" as const, text: "Hello." }] }));
});
afterAll(async () => {
  await harness?.close();
});

async function initOf(sandbox: "on" | "off"): Promise<Record<string, unknown>> {
  const base = harness.options();
  // The sandbox looks for bubblewrap on the run's PATH.
  const env = { ...base.env, PATH: process.env.PATH ?? "" };
  const messages = await runQuery("Say hello.", harness.options({ sandbox, env }));
  const init = messages.find((message) => message.type === "system" && message.subtype === "init");
  return (init ?? {}) as Record<string, unknown>;
}

describe("R-S6: system/init's sandbox_enabled", () => {
  it("R-S6: true when Bash runs in the sandbox (sandbox on), false when it does not (off); no memory_paths (no auto-memory store)", async () => {
    const on = await initOf("on");
    expect(on.sandbox_enabled).toBe(true);
    const off = await initOf("off");
    expect(off.sandbox_enabled).toBe(false);
    expect(off).not.toHaveProperty("memory_paths");
  });
});
