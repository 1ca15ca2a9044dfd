import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { toolThenTextBrain } from "@forkloop/sim/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentPool, createAgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import { runToEnd, testSessionOptions, toolResultTexts } from "./testing/index.js";

let server: Simulator;
let pool: AgentPool;
let dir: string;
/** The sub-agents' endpoint: a short idle deadline and one retry, so the hung one gives up soon. */
const retry = { streamIdleTimeoutMs: 500, maxRetries: 1, baseDelayMs: 1 };

beforeAll(async () => {
  // The main loop gets valid replies (an Agent call, then text); every sub-agent request hangs
  // after its headers, like a stuck upstream.
  const parent = toolThenTextBrain(
    { name: "Agent", input: { description: "scan", prompt: "Scan the repo." } },
    "parent done",
  );
  server = await startSimulator({
    brain: (request) =>
      request.querySource?.startsWith("agent:")
        ? { content: [], fault: "headers_then_silence" }
        : parent(request),
  });
  dir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-hung-")));
  pool = createAgentPool({ endpoint: { apiKey: "test-key", baseURL: server.url, retry }, maxThreads: 1 });
});
afterAll(async () => {
  await pool.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("R-R2: a hung model", () => {
  it("ends the sub-agent with an error result, not the parent", async () => {
    // The main loop keeps the default deadlines: only the sub-agent's model hangs.
    const session = await createSession(testSessionOptions({ baseURL: server.url, dir, pool }));
    try {
      const terminal = await runToEnd(session.run("Scan the repo with a sub-agent."));
      expect(terminal.reason).toBe("completed");
      const [result] = toolResultTexts(terminal.messages);
      expect(result).toMatch(/sent no event \(pings aside\) for 500 ms/);
      // What each messages request got: its fault, or a reply ("ok").
      const sources = server
        .requests()
        .filter((record) => record.path === "/v1/messages")
        .map((record) => record.fault ?? "ok");
      // Main: the Agent call and the final answer; the sub-agent: two hung attempts.
      expect(sources.filter((kind) => kind === "headers_then_silence")).toHaveLength(2);
      expect(sources.filter((kind) => kind === "ok")).toHaveLength(2);
    } finally {
      await session.close();
    }
  });
});
