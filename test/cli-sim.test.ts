import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { runCliInProcess, startCli, startSimInProcess, waitForOutput } from "@forkloop/cli/testing";
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

  it("--record-limit N keeps only the newest N request records", async () => {
    const sim = await startSimInProcess(dir, ["--record-limit", "2"]);
    try {
      const headers = { "x-api-key": "test-key", "anthropic-version": "2023-06-01" };
      for (const id of ["claude-haiku-4-5", "claude-sonnet-4-6", "claude-opus-5-5"]) {
        const response = await fetch(`${sim.url}/v1/models/${id}`, { headers });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      }
      const paths = (await sim.requests()).map((record) => record.path);
      expect(paths).toEqual(["/v1/models/claude-sonnet-4-6", "/v1/models/claude-opus-5-5"]);
    } finally {
      await sim.stop();
    }
    const bad = await runCliInProcess(["sim", "--record-limit", "0"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--record-limit: must be at least 1");
  });

  it("--rate-limits sets the limits; every response carries the headers; over the limit is a 429", async () => {
    const sim = await startSimInProcess(dir, ["--rate-limits", "rpm=2,itpm=50000,otpm=8000"]);
    try {
      const send = () =>
        fetch(`${sim.url}/v1/messages`, {
          method: "POST",
          headers: {
            "x-api-key": "test-key",
            "anthropic-version": "2023-06-01",
            "content-type": "application/json",
          },
          body: JSON.stringify({
            model: "claude-haiku-4-5",
            max_tokens: 64,
            messages: [{ role: "user", content: "hi" }],
          }),
        });
      const first = await send();
      expect(first.status).toBe(200);
      expect(first.headers.get("anthropic-ratelimit-requests-limit")).toBe("2");
      expect(first.headers.get("anthropic-ratelimit-requests-remaining")).toBe("1");
      expect(first.headers.get("anthropic-ratelimit-input-tokens-limit")).toBe("50000");
      expect(first.headers.get("anthropic-ratelimit-output-tokens-limit")).toBe("8000");
      // tokens-* is whichever of the two has less left (unit-tested in rate-limiter.test.ts).
      expect(["50000", "8000"]).toContain(first.headers.get("anthropic-ratelimit-tokens-limit"));
      expect(Date.parse(first.headers.get("anthropic-ratelimit-requests-reset") ?? "")).toBeGreaterThan(0);
      expect((await send()).status).toBe(200);
      const refused = await send();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      await Promise.all([first, refused].map((r) => r.arrayBuffer()));
    } finally {
      await sim.stop();
    }
    const bad = await runCliInProcess(["sim", "--rate-limits", "rpm=fast"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--rate-limits: "rpm=fast" is not a limit: give rpm, itpm or otpm');
  });

  it("bad flags exit 2 naming the flag and the fix", async () => {
    const faults = await runCliInProcess(["sim", "--faults", "boom"], { cwd: dir });
    expect(faults.code).toBe(2);
    expect(faults.stderr).toMatch(/--faults "boom".*Example: --faults/s);
    const port = await runCliInProcess(["sim", "--port", "99999"], { cwd: dir });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("--port: must be at most 65535");
  });
});
