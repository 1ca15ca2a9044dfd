import type { Brain, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import {
  finalText,
  runToEnd,
  type SessionRig,
  startSessionRig,
  testSessionOptions,
} from "./testing/index.js";

/**
 * The main agent starts an "outer" sub-agent; every sub-agent tries to start one more level
 * ("inner", then "deeper") and reports what its own Agent call returned.
 */
const brain: Brain = (request) => {
  if (request.querySource === "sdk") {
    if (request.lastToolResults.length > 0)
      return { content: [{ type: "text", text: `parent got: ${request.lastToolResults[0]?.content}` }] };
    return {
      content: [
        {
          type: "tool_use",
          name: "Agent",
          input: { description: "outer", prompt: "Go deep.", subagent_type: "fork" },
        },
      ],
    };
  }
  const messages = JSON.stringify(request.body.messages);
  const level = messages.includes("Your task (inner)") ? "inner" : "outer";
  if (request.lastToolResults.length > 0) {
    return { content: [{ type: "text", text: `${level} got: ${request.lastToolResults[0]?.content}` }] };
  }
  const next = level === "outer" ? "inner" : "deeper";
  return {
    content: [
      {
        type: "tool_use",
        name: "Agent",
        input: { description: next, prompt: "Go deeper.", subagent_type: "fork" },
      },
    ],
  };
};

let sim: Simulator;
let pool: AgentPool;
let dir: string;

let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(startSimulator({ brain }), "nested");
  ({ sim, pool, dir } = rig);
});
afterAll(() => rig.close());
afterEach(() => sim.clearRequests());

async function runSession(maxAgentDepth?: number): Promise<string> {
  const session = await createSession({
    ...testSessionOptions({ baseURL: sim.url, dir, pool }),
    ...(maxAgentDepth === undefined ? {} : { maxAgentDepth }),
  });
  const terminal = await runToEnd(session.run("Start the work."));
  await session.close();
  expect(terminal.reason).toBe("completed");
  return finalText(terminal.messages);
}

describe("nested sub-agents (R-F1, R-F2 parent-side tools)", () => {
  it("R-F1: a sub-agent's Agent call starts a nested sub-agent in the pool; the depth limit (2) stops the third level", async () => {
    const text = await runSession();
    // main → outer → inner; inner's own Agent call is refused at the limit.
    // Each level's report reaches its parent inside Claude Code's hand-back frame (R-X1).
    expect(text).toMatch(/^parent got: [\s\S]*\[Subagent hand-back\][\s\S]*outer got: [\s\S]*inner got:/);
    expect(text).toContain("Agent is not available to this sub-agent");
    const forks = sim.requests().filter((record) => record.querySource === "agent:fork");
    // outer: 2 requests (call, report); inner: 2 requests (refused call, report); no "deeper".
    expect(forks).toHaveLength(4);
    expect(forks.some((record) => record.rawBody.includes("Your task (deeper)"))).toBe(false);
    // The nested fork starts from the session's prefix: it is a cache read too (R-F3).
    const inner = forks.find((record) => record.rawBody.includes("Your task (inner)"));
    expect(inner?.usage?.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it("R-F1: maxAgentDepth 1: sub-agents cannot start sub-agents", async () => {
    const text = await runSession(1);
    expect(text).toMatch(/^parent got: [\s\S]*\[Subagent hand-back\][\s\S]*outer got:/);
    expect(text).toContain("Agent is not available to this sub-agent");
    const forks = sim.requests().filter((record) => record.querySource === "agent:fork");
    expect(forks.some((record) => record.rawBody.includes("Your task (inner)"))).toBe(false);
  });
});
