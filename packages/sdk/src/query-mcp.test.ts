import { testServerConfig } from "@forkloop/mcp/testing";
import type { BrainRequest } from "@forkloop/sim";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { SDKMessage } from "./messages.js";
import { query } from "./query.js";
import { createSdkMcpServer, tool } from "./sdk-mcp-server.js";
import { startHarness } from "./test-support/sdk-harness.js";

type Harness = Awaited<ReturnType<typeof startHarness>>;

const use = (id: string, name: string, input: Record<string, unknown> = {}) => ({
  type: "tool_use" as const,
  id,
  name,
  input,
});

/** The text of every tool_result in a request body, by tool_use id. */
function toolResultTexts(rawBody: string): Map<string, string> {
  type Block = { type: string; tool_use_id?: string; content?: string | { type: string; text?: string }[] };
  const body = JSON.parse(rawBody) as { messages: { content: string | Block[] }[] };
  const texts = new Map<string, string>();
  for (const message of body.messages) {
    if (typeof message.content === "string") continue;
    for (const block of message.content) {
      if (block.type !== "tool_result" || block.tool_use_id === undefined) continue;
      const content = block.content ?? "";
      texts.set(
        block.tool_use_id,
        typeof content === "string" ? content : content.map((part) => part.text ?? "").join(""),
      );
    }
  }
  return texts;
}

/** The main agent starts one sub-agent; the sub-agent calls one tool of each kind of server. */
function brain(request: BrainRequest) {
  if (request.querySource === "agent:general-purpose") {
    if (request.lastToolResults.length > 0) {
      return { content: [{ type: "text" as const, text: "sub-agent: every MCP call made" }] };
    }
    return {
      content: [
        use("toolu_calc", "mcp__calc__add", { a: 2, b: 3 }),
        use("toolu_instance", "mcp__shout__upper", { text: "mcp" }),
        use("toolu_stdio", "mcp__test__pid"),
      ],
    };
  }
  if (request.querySource !== "sdk") return undefined;
  if (request.lastToolResults.length > 0) return { content: [{ type: "text" as const, text: "done" }] };
  return {
    content: [use("toolu_agent", "Agent", { description: "use MCP", prompt: "Call the MCP tools." })],
  };
}

describe("R-M1: query()'s mcpServers — every kind of server, for the main agent and its sub-agents", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(brain);
  });
  afterAll(async () => {
    await harness?.close();
  });

  it("R-M1, R-K2: an Agent sub-agent in a worker thread calls a createSdkMcpServer tool, an McpServer instance and a stdio server through the parent; system/init and mcpServerStatus() list them with their source; the stdio server is ended with the session", async () => {
    const received: unknown[] = [];
    const calc = createSdkMcpServer({
      name: "calc",
      tools: [
        tool("add", "Adds two numbers", { a: z.number(), b: z.number() }, async (args) => {
          received.push(args);
          return { content: [{ type: "text", text: String(args.a + args.b) }] };
        }),
      ],
    });
    const instance = new McpServer({ name: "shout", version: "1.0.0" });
    instance.registerTool(
      "upper",
      {
        description: "Upper-cases text",
        inputSchema: { text: z.string() },
        annotations: { readOnlyHint: true },
      },
      async ({ text }) => ({ content: [{ type: "text", text: text.toUpperCase() }] }),
    );
    const run = query({
      prompt: "Have a sub-agent use MCP.",
      options: harness.options({
        mcpServers: { calc, shout: { type: "sdk", name: "shout", instance }, test: testServerConfig() },
        // The sub-agent's calls need permission like the main agent's: allow them all.
        allowedTools: ["mcp__calc", "mcp__shout__*", "mcp__test__pid"],
      }),
    });
    const messages: SDKMessage[] = [];
    let statusDuring: unknown;
    for await (const message of run) {
      messages.push(message);
      if (message.type === "system" && message.subtype === "init") statusDuring = await run.mcpServerStatus();
    }
    const init = messages.find((message) => message.type === "system" && message.subtype === "init");
    // R-K2: each server's source as the Agent SDK names it: `sdk` for the program's in-process
    // servers, `dynamic` for a process server the program configures.
    const servers = [
      { name: "calc", status: "connected", source: "sdk" },
      { name: "shout", status: "connected", source: "sdk" },
      { name: "test", status: "connected", source: "dynamic" },
    ];
    expect(init).toMatchObject({ mcp_servers: servers });
    expect(statusDuring).toEqual(servers);
    expect(messages.at(-1)).toMatchObject({ type: "result", result: "done" });
    expect(received).toEqual([{ a: 2, b: 3 }]);

    const sub = harness.sim.requests().filter((record) => record.querySource === "agent:general-purpose");
    expect(sub).toHaveLength(2);
    const results = toolResultTexts(sub[1]?.rawBody ?? "{}");
    expect(results.get("toolu_calc")).toBe("5");
    expect(results.get("toolu_instance")).toBe("MCP");
    const pid = Number(results.get("toolu_stdio"));
    expect(pid).toBeGreaterThan(0);
    // The session closed its servers: the stdio server's process is gone.
    expect(() => process.kill(pid, 0)).toThrow();
    expect(await run.mcpServerStatus()).toEqual(servers.map((server) => ({ ...server, status: "closed" })));
  });
});
