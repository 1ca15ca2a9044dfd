import { type Brain, type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "./agent-pool.js";
import { EXPLORE_AGENT, PLAN_AGENT } from "./builtin-agent-types.js";
import { createSession } from "./main-session.js";
import { runToEnd, type SessionRig, startSessionRig, testSessionOptions } from "./testing/index.js";

// R-F1: Claude Code's built-in Explore and Plan types, which a model calls by name with no
// definition file: each is a conversation of its own with its role as system prompt and no tool
// that writes or starts agents.
const brain: Brain = (request) => {
  if (request.querySource === "sdk") {
    if (request.lastToolResults.length > 0) {
      return { content: [{ type: "text", text: JSON.stringify(request.lastToolResults) }] };
    }
    return {
      content: ["Explore", "Plan"].map((type) => ({
        type: "tool_use" as const,
        name: "Agent",
        input: { description: `${type} it`, prompt: `Task for ${type}.`, subagent_type: type },
      })),
    };
  }
  return { content: [{ type: "text", text: `report of ${request.querySource}` }] };
};

let sim: Simulator;
let pool: AgentPool;
let dir: string;

let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(startSimulator({ brain }), "builtin-agents");
  ({ sim, pool, dir } = rig);
});
afterAll(() => rig.close());

describe("R-F1: the built-in agent types Explore and Plan", () => {
  it("R-F1: Agent with subagent_type Explore or Plan runs (no unknown type): its role as system prompt, the task alone, read-only tools", async () => {
    const session = await createSession(testSessionOptions({ baseURL: sim.url, dir, pool }));
    const terminal = await runToEnd(session.run("Find the greeting, then plan a change."));
    await session.close();
    expect(terminal.reason).toBe("completed");
    for (const [type, definition] of [
      ["Explore", EXPLORE_AGENT],
      ["Plan", PLAN_AGENT],
    ] as const) {
      const record = sim.requests().find((r) => r.querySource === `agent:${type}`);
      expect(record, `${type} made no request`).toBeDefined();
      const body = JSON.parse(record?.rawBody ?? "{}");
      expect(body.system[0].text).toBe(definition.prompt);
      expect(JSON.stringify(body.messages[0])).toContain(`Task for ${type}.`);
      const tools = (body.tools as { name: string }[]).map((tool) => tool.name);
      expect(tools).toContain("Read");
      for (const writer of ["Write", "Edit", "NotebookEdit", "Agent"]) expect(tools).not.toContain(writer);
    }
    const answer = sim.requests().filter((r) => r.querySource === "sdk")[1]?.rawBody ?? "";
    expect(answer).not.toContain("Unknown agent type");
  });
});
