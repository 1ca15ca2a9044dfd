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
        // No subagent_type: general-purpose, as in Claude Code — three of one type.
        ...["x", "y", "z"].map((name) => ({
          type: "tool_use" as const,
          name: "Agent",
          input: { description: `look around ${name}`, prompt: `Look around ${name}.` },
        })),
        {
          type: "tool_use" as const,
          name: "Agent",
          input: { description: "continue", prompt: "Carry on.", subagent_type: "fork" },
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

/** Cache reads of one type's fan-out, lowest first: the first request writes, the others read one prefix. */
function sortedCacheReads(
  records: readonly { usage?: { cache_read_input_tokens?: number } | null | undefined }[],
) {
  return records.map(({ usage }) => usage?.cache_read_input_tokens ?? 0).sort((x, y) => x - y);
}

describe("R-K3: agents are their own conversations; fork continues the parent's", () => {
  it("R-K3: a custom agent and general-purpose (the default type) get their prompt as system and their task alone; each type's fan-out reads one warmed prefix; fork reads the parent's", async () => {
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
    const cacheReads = sortedCacheReads(reviewers);
    expect(cacheReads[0]).toBe(0);
    expect(cacheReads[1]).toBeGreaterThan(0);
    expect(cacheReads[2]).toBe(cacheReads[1]);

    // general-purpose (no subagent_type) is a conversation of its own too, as in Claude Code:
    // its prompt as system, the parent's tools but Agent, its task alone; the three read one prefix.
    const general = sim
      .requests()
      .filter((record) => record.querySource === "agent:general-purpose")
      .map((record) => ({ body: JSON.parse(record.rawBody), usage: record.usage }));
    expect(general).toHaveLength(3);
    for (const { body } of general) {
      expect(body.system[0].text).toMatch(/^You are an agent working on one task for a parent agent/);
      expect(body.system[1]).toEqual(parent.system[1]);
      expect(body.messages).toHaveLength(1);
      expect(JSON.stringify(body.messages)).toMatch(/Look around [xyz]\./);
      expect(JSON.stringify(body.messages)).not.toContain(PARENT_PROMPT);
    }
    const generalReads = sortedCacheReads(general);
    expect(generalReads[0]).toBe(0);
    // The warmed prefix is the type's system and tools: most of each later request reads from the cache.
    for (const [index, { usage }] of general.entries()) {
      if ((usage?.cache_read_input_tokens ?? 0) === 0) continue;
      const total =
        (usage?.input_tokens ?? 0) +
        (usage?.cache_creation_input_tokens ?? 0) +
        (usage?.cache_read_input_tokens ?? 0);
      expect(usage?.cache_read_input_tokens ?? 0, `general-purpose request ${index}`).toBeGreaterThan(
        0.5 * total,
      );
    }
    expect(generalReads[1]).toBeGreaterThan(0);
    expect(generalReads[2]).toBe(generalReads[1]);

    // fork continues the parent's conversation: its exact system, tools and history first (R-F3),
    // so its first request reads the parent's whole prefix from the cache.
    const forkRecord = sim.requests().find((record) => record.querySource === "agent:fork");
    const fork = JSON.parse(forkRecord?.rawBody ?? "{}");
    expect(fork.system).toEqual(parent.system);
    expect(fork.tools).toEqual(parent.tools);
    expect(JSON.stringify(fork.messages[0])).toContain(PARENT_PROMPT);
    expect(forkRecord?.usage?.cache_read_input_tokens ?? 0).toBeGreaterThan(0);
  });
});
