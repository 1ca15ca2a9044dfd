import { type Brain, type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentDefinition } from "./agent-definitions.js";
import type { AgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import { runToEnd, type SessionRig, startSessionRig, testSessionOptions } from "./testing/index.js";

/** An agent prompt long enough to pass every model's minimum cacheable length. */
const REVIEWER_PROMPT = `You are a code reviewer. ${Array.from({ length: 2_500 }, (_, i) => `check${i % 89}`).join(" ")}`;
const PARENT_PROMPT = "Review the three modules, and have a general look around too.";

const brain: Brain = (request) => {
  if (request.querySource === "sdk") {
    if (request.lastToolResults.length > 0) return { content: [{ type: "text", text: "All reviewed." }] };
    return {
      content: [
        ...["a", "b", "c"].map((name) => ({
          type: "tool_use" as const,
          name: "Agent",
          input: {
            description: `review ${name}`,
            prompt: `Review module ${name}.`,
            subagent_type: "reviewer",
          },
        })),
        {
          type: "tool_use" as const,
          name: "Agent",
          input: { description: "look around", prompt: "Look around.", subagent_type: "general-purpose" },
        },
      ],
    };
  }
  return { content: [{ type: "text", text: `report on: ${request.lastUserText ?? ""}`.slice(0, 80) }] };
};

const agents: AgentDefinition[] = [
  {
    name: "reviewer",
    description: "Reviews one module",
    prompt: REVIEWER_PROMPT,
    tools: ["Read", "Grep"],
    source: "code",
  },
];

let sim: Simulator;
let pool: AgentPool;
let dir: string;

let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(startSimulator({ brain }), "own-conversation");
  ({ sim, pool, dir } = rig);
});
afterAll(() => rig.close());

describe("R-K3: custom agents are their own conversations", () => {
  it("R-K3: a custom agent gets its prompt as system, only its tools and its task alone; its instances share one cached prefix; general-purpose still forks", async () => {
    const session = await createSession({ ...testSessionOptions({ baseURL: sim.url, dir, pool }), agents });
    const terminal = await runToEnd(session.run(PARENT_PROMPT));
    await session.close();
    expect(terminal.reason).toBe("completed");

    const parent = JSON.parse(sim.requests().find((record) => record.querySource === "sdk")?.rawBody ?? "{}");
    const reviewers = sim
      .requests()
      .filter((record) => record.querySource === "agent:reviewer")
      .map((record) => ({ body: JSON.parse(record.rawBody), usage: record.usage }));
    expect(reviewers).toHaveLength(3);
    for (const { body } of reviewers) {
      expect(body.system[0].text).toBe(REVIEWER_PROMPT);
      // The session's block (environment, permission mode) follows; the parent's identity does not.
      expect(body.system[1]).toEqual(parent.system[1]);
      expect(JSON.stringify(body.system)).not.toContain(parent.system[0].text);
      expect(body.tools.map((tool: { name: string }) => tool.name)).toEqual(["Grep", "Read"]);
      expect(body.messages).toHaveLength(1);
      const blocks: { type: string; text?: string }[] =
        typeof body.messages[0].content === "string"
          ? [{ type: "text", text: body.messages[0].content }]
          : body.messages[0].content;
      expect(blocks.map((block) => block.text ?? block.type).join("")).toMatch(/^Review module [abc]\.$/);
      expect(JSON.stringify(body.messages)).not.toContain(PARENT_PROMPT);
    }
    // One prefix for the type: the first writes it, the others (held until its response started) read it.
    const cacheReads = reviewers
      .map(({ usage }) => usage?.cache_read_input_tokens ?? 0)
      .sort((x, y) => x - y);
    expect(cacheReads[0]).toBe(0);
    expect(cacheReads[1]).toBeGreaterThan(0);
    expect(cacheReads[2]).toBe(cacheReads[1]);

    // general-purpose is a fork of the parent: its exact tools and its history first (R-F3).
    const fork = JSON.parse(
      sim.requests().find((record) => record.querySource === "agent:general-purpose")?.rawBody ?? "{}",
    );
    expect(fork.system).toEqual(parent.system);
    expect(fork.tools).toEqual(parent.tools);
    expect(JSON.stringify(fork.messages[0])).toContain(PARENT_PROMPT);
  });
});
