import { resolveModelAlias } from "@forkloop/loop-core";
import { type Brain, type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import { runToEnd, type SessionRig, startSessionRig, testSessionOptions } from "./testing/index.js";

// R-F1, R-X1: Claude Code's Agent input carries `model` (an alias) and `effort`; a call that sets
// them runs its sub-agent on that model and effort — a fork and an agent of its own alike — and a
// call that leaves them out runs on the parent's (control).
const CALLS = [
  {
    description: "Fork on sonnet",
    prompt: "Task A.",
    subagent_type: "general-purpose",
    model: "sonnet",
    effort: "low",
  },
  { description: "Explore on haiku", prompt: "Task B.", subagent_type: "Explore", model: "haiku" },
  { description: "Plain fork", prompt: "Task C.", subagent_type: "general-purpose" },
];

const brain: Brain = (request) => {
  if (request.querySource === "sdk") {
    if (request.lastToolResults.length > 0) return { content: [{ type: "text", text: "done" }] };
    return { content: CALLS.map((input) => ({ type: "tool_use" as const, name: "Agent", input })) };
  }
  return { content: [{ type: "text", text: `report of ${request.querySource}` }] };
};

let sim: Simulator;
let pool: AgentPool;
let dir: string;
let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(startSimulator({ brain }), "agent-overrides");
  ({ sim, pool, dir } = rig);
});
afterAll(() => rig.close());

/** The first request of the sub-agent whose task is `task`. */
function subAgentRequest(task: string): { model: string; output_config?: { effort?: string } } {
  const record = sim
    .requests()
    .find((r) => r.querySource?.startsWith("agent:") && r.rawBody.includes(task) && r.status === 200);
  expect(record, `no request for ${task}`).toBeDefined();
  return JSON.parse(record?.rawBody ?? "{}");
}

describe("R-F1: the Agent call's model and effort", () => {
  it("R-F1, R-X1: model (an alias, newest of its family) and effort reach the sub-agent's requests; left out, the parent's model and effort are kept (control)", async () => {
    const session = await createSession(testSessionOptions({ baseURL: sim.url, dir, pool }));
    const terminal = await runToEnd(session.run("Start three helpers."));
    await session.close();
    expect(terminal.reason).toBe("completed");
    const parent = JSON.parse(sim.requests().find((r) => r.querySource === "sdk")?.rawBody ?? "{}");
    const results = JSON.stringify(sim.requests().filter((r) => r.querySource === "sdk")[1]?.rawBody);
    expect(results).not.toContain("InputValidationError");
    const a = subAgentRequest("Task A.");
    expect(a.model).toBe(resolveModelAlias("sonnet"));
    expect(a.output_config?.effort).toBe("low");
    const b = subAgentRequest("Task B.");
    expect(b.model).toBe(resolveModelAlias("haiku"));
    const c = subAgentRequest("Task C.");
    expect(c.model).toBe(parent.model);
    expect(c.output_config?.effort).toBe(parent.output_config?.effort);
    expect([resolveModelAlias("sonnet"), resolveModelAlias("haiku")]).not.toContain(parent.model);
    expect(parent.output_config?.effort).not.toBe("low");
  });
});
