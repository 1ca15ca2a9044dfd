import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { runCli, startCli, waitForOutput } from "@forkloop/cli/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-sim-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("forkloop sim (standalone simulator)", () => {
  it("prints its URL, serves the official SDK with the injected faults, and stops on SIGINT", async () => {
    const sim = startCli(["sim", "--port", "0", "--faults", "429@1:retry_after=0"], { cwd: dir });
    try {
      await waitForOutput(sim.child, sim.stderr, (text) => text.includes("listening"));
      const url = sim.stdout().trim().split("\n")[0] ?? "";
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sim.stderr()).toContain("replies are simulated, not from a real model");
      const client = new Anthropic({ apiKey: "test-key", baseURL: url, maxRetries: 0 });
      const request = {
        model: "claude-sonnet-4-6",
        max_tokens: 64,
        messages: [{ role: "user" as const, content: "hi" }],
      };
      await expect(client.messages.create(request)).rejects.toBeInstanceOf(Anthropic.RateLimitError);
      const reply = await client.messages.create(request);
      expect(reply.content[0]?.type).toBe("text");
    } finally {
      sim.child.kill("SIGINT");
    }
    expect((await sim.exited).code).toBe(0);
  });

  it("bad flags exit 2 naming the flag and the fix", async () => {
    const faults = await runCli(["sim", "--faults", "boom"], { cwd: dir });
    expect(faults.code).toBe(2);
    expect(faults.stderr).toMatch(/--faults "boom".*Example: --faults/s);
    const port = await runCli(["sim", "--port", "99999"], { cwd: dir });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("--port: must be at most 65535");
  });
});
