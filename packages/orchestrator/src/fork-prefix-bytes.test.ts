import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Tool } from "@forkloop/loop-core";
import type { Brain, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { createBuiltinTools } from "@forkloop/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import { type SessionRig, startSessionRig, testSessionOptions } from "./testing/index.js";

/** The parent reads a file, then forks (so its last request before the fork has a history), then ends. */
const brain: Brain = (request) => {
  if ((request.querySource ?? "").startsWith("agent:"))
    return { content: [{ type: "text", text: "found it" }] };
  if (request.turnIndex === 0)
    return { content: [{ type: "tool_use", name: "Read", input: { file_path: `${dir}/notes.txt` } }] };
  if (request.turnIndex === 1)
    return {
      content: [
        {
          type: "tool_use",
          name: "Agent",
          input: { description: "look", prompt: "Look around.", subagent_type: "fork" },
        },
      ],
    };
  return { content: [{ type: "text", text: "done" }] };
};

/** The parts of a request besides its messages that make up the cache key. */
const KEY_PARTS = ["model", "tools", "system", "thinking", "tool_choice", "max_tokens"] as const;

/** A body's message blocks in order, each with its role, without cache markers (not content). */
function blocksOf(body: { messages: { role: string; content: string | unknown[] }[] }): string[] {
  return body.messages.flatMap((message) =>
    (typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content).map(
      (block) =>
        JSON.stringify([message.role, block], (key, value) => (key === "cache_control" ? undefined : value)),
    ),
  );
}

let sim: Simulator;
let pool: AgentPool;
let dir: string;

let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(startSimulator({ brain }), "fork-prefix");
  ({ sim, pool, dir } = rig);
  writeFileSync(join(dir, "notes.txt"), "the notes\n");
});
afterAll(() => rig.close());

describe("the request prefix travels as bytes", () => {
  it("R-A2/R-F3: an Agent fork's first request is its parent's last request byte for byte up to its own messages, read from the cache, though the worker's own tool would be described otherwise", async () => {
    // The parent's Read says something the worker's Read (built in its thread) does not: a worker
    // that built the definitions again would send other bytes, and miss the whole prefix.
    const tools: Tool[] = createBuiltinTools().map((tool) =>
      tool.name === "Read"
        ? (Object.create(tool, { description: { value: `${tool.description}\n(parent build)` } }) as Tool)
        : tool,
    );
    const session = await createSession({ ...testSessionOptions({ baseURL: sim.url, dir, pool }), tools });
    const announced: string[] = [];
    const turn = session.run("Look at the repository.");
    let step = await turn.next();
    while (!step.done) {
      if (step.value.type === "request_start") announced.push(JSON.stringify(step.value.prefix.tools));
      step = await turn.next();
    }
    await session.close();
    expect(step.value.reason).toBe("completed");

    const requests = sim.requests().filter((record) => record.path === "/v1/messages");
    const forkAt = requests.findIndex((record) => (record.querySource ?? "").startsWith("agent:"));
    const fork = requests[forkAt];
    // The parent's last request before the fork: the one whose reply called Agent.
    const parent = requests.slice(0, forkAt).findLast((record) => record.querySource === "sdk");
    if (!parent || !fork) throw new Error("expected the parent's request and the fork's");
    expect(JSON.parse(parent.rawBody).messages).toHaveLength(3);
    expect(parent.rawBody).toContain("(parent build)");
    const [parentBody, forkBody] = [JSON.parse(parent.rawBody), JSON.parse(fork.rawBody)];
    for (const part of KEY_PARTS) {
      const bytes = JSON.stringify(forkBody[part]);
      expect(bytes, part).toBe(JSON.stringify(parentBody[part]));
      if (bytes !== undefined) expect(parent.rawBody.includes(bytes), part).toBe(true);
    }
    // Every block the parent sent opens the fork's messages, in order (the fork's directive joins
    // the parent's last user turn, after its blocks).
    const parentBlocks = blocksOf(parentBody);
    expect(blocksOf(forkBody).slice(0, parentBlocks.length)).toEqual(parentBlocks);
    expect(blocksOf(forkBody).length).toBeGreaterThan(parentBlocks.length);
    // What the loop announced is what it sent: the session forked from those very bytes.
    expect(announced[1]).toBe(JSON.stringify(parentBody.tools));
    const parentCached =
      (parent.usage?.cache_creation_input_tokens ?? 0) + (parent.usage?.cache_read_input_tokens ?? 0);
    expect(parentCached).toBeGreaterThan(0);
    expect(fork.usage?.cache_read_input_tokens).toBeGreaterThanOrEqual(parentCached);
  });
});
