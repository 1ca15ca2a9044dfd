import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import { runToEnd, testProfile } from "./testing/index.js";

let sim: Simulator;
let dir: string;
beforeAll(async () => {
  // Every twentieth session forks a sub-agent (its pool starts a thread); the rest fork nothing.
  sim = await startSimulator({
    brain: (request) =>
      request.lastUserText?.includes("fork") && request.querySource === "sdk" && request.turnIndex === 0
        ? { content: [{ type: "tool_use", name: "Agent", input: { description: "look", prompt: "Look." } }] }
        : { content: [{ type: "text", text: "short answer" }] },
  });
  dir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-shutdown-")));
});
afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Sessions run back to back, each on its own pool that it closes at the end (the pool starts its
 * thread at the session's first fork: every twentieth session forks).
 */
const SESSIONS = 200;

describe("no native crash when a pool closes while its thread is starting", () => {
  it(`${SESSIONS} short sessions back to back, each with its own pool: every one ends with a terminal`, async () => {
    const reasons: string[] = [];
    for (let index = 0; index < SESSIONS; index++) {
      const session = await createSession({
        endpoint: { apiKey: "test-key", baseURL: sim.url },
        cwd: dir,
        profile: testProfile(),
        sessionsDir: join(dir, "sessions"),
        home: dir,
        sessionMemory: false,
      });
      try {
        const terminal = await runToEnd(session.run(index % 20 === 0 ? "fork one" : "answer"));
        reasons.push(terminal.reason);
      } finally {
        await session.close();
      }
    }
    expect(reasons.filter((reason) => reason === "completed")).toHaveLength(SESSIONS);
  }, 240_000);

  it("closing a pool at any moment of its first thread's start waits for the thread (and for a second close)", async () => {
    // Closes 0, 150, … 1,650 ms after the pool started its thread: before, during and after the
    // worker module loads (the window in which terminating the thread aborts the process).
    for (let index = 0; index < 12; index++) {
      const pool = createAgentPool({ endpoint: { apiKey: "test-key", baseURL: sim.url }, minThreads: 1 });
      await new Promise((resolve) => setTimeout(resolve, index * 150));
      await Promise.all([pool.close(), pool.close()]);
      expect(pool.stats().threads).toBe(0);
    }
  }, 120_000);
});
