import type { PermissionMode } from "@forkloop/loop-core";
import { connectMcpServers, type McpConnections } from "@forkloop/mcp";
import { TEST_PNG_BASE64, testServerConfig } from "@forkloop/mcp/testing";
import { type Brain, type Simulator, startSimulator } from "@forkloop/sim";
import { createBuiltinTools } from "@forkloop/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentDefinition } from "./agent-definitions.js";
import type { AgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import {
  finalText,
  runToEnd,
  type SessionRig,
  startSessionRig,
  testProfile,
  testSessionOptions,
} from "./testing/index.js";

/**
 * The main agent starts one sub-agent per line of its prompt (`type|call NAME JSON`); each
 * sub-agent makes that one call and reports what came back (is_error, text, whether an image did).
 */
/** The sub-agent's report inside its Agent call's hand-back frame (agent-hand-back.ts), unindented. */
function handBackReport(toolResult: string): string {
  const start = toolResult.indexOf("The report follows:\n");
  if (start < 0) return toolResult;
  const lines = toolResult.slice(start + "The report follows:\n".length).split("\n");
  const end = lines.findIndex((line) => !line.startsWith("  "));
  return (end < 0 ? lines : lines.slice(0, end)).map((line) => line.slice(2)).join("\n");
}

const brain: Brain = (request) => {
  if (request.querySource === "sdk") {
    if (request.lastToolResults.length > 0) {
      return {
        content: [
          {
            type: "text",
            text: request.lastToolResults.map((result) => handBackReport(result.content)).join("\n---\n"),
          },
        ],
      };
    }
    const lines = (request.lastUserText ?? "").split("\n").filter((line) => line.includes("|"));
    return {
      content: lines.map((line) => {
        const [type, prompt] = line.split("|") as [string, string];
        return {
          type: "tool_use",
          name: "Agent",
          input: { description: "probe", prompt, subagent_type: type },
        };
      }),
    };
  }
  if (request.lastToolResults.length > 0) {
    const result = request.lastToolResults[0]!;
    const last = request.body.messages.at(-1);
    const image = JSON.stringify(last).includes(`"type":"image"`);
    return {
      content: [{ type: "text", text: `error=${result.is_error} image=${image} text=${result.content}` }],
    };
  }
  // A fork's text also holds the parent's prompt (every line): read the
  // directive's own task; a custom agent's only message is its task (R-K3).
  const text = request.lastUserText ?? "";
  const call = /Your task \(probe\):\ncall (\S+) (\{.*\})/.exec(text) ?? /^call (\S+) (\{.*\})$/.exec(text);
  if (!call) return { content: [{ type: "text", text: "no call" }] };
  return { content: [{ type: "tool_use", name: call[1]!, input: JSON.parse(call[2]!) }] };
};

const agents: AgentDefinition[] = [
  {
    name: "mcp-only",
    description: "Only the test server's tools, not its image.",
    prompt: "Use the MCP tools.",
    tools: ["mcp__test"],
    disallowedTools: ["mcp__test__image"],
    source: "code",
  },
];

let sim: Simulator;
let pool: AgentPool;
let mcp: McpConnections;
let dir: string;

let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(startSimulator({ brain }), "mcp-agents");
  ({ sim, pool, dir } = rig);
  mcp = await connectMcpServers({ test: testServerConfig() });
});
afterAll(async () => {
  await mcp.close();
  await rig.close();
});

async function runLines(
  lines: string[],
  permissionMode: PermissionMode = "bypassPermissions",
): Promise<string[]> {
  sim.clearRequests();
  const session = await createSession({
    ...testSessionOptions({ baseURL: sim.url, dir, pool }),
    profile: testProfile({ permissionMode }),
    tools: [...createBuiltinTools(), ...mcp.tools],
    agents,
  });
  const terminal = await runToEnd(session.run(lines.join("\n")));
  await session.close();
  expect(terminal.reason).toBe("completed");
  return finalText(terminal.messages).split("\n---\n");
}

describe("R-M1: MCP tools in sub-agents (worker-side proxies over comlink)", () => {
  it("R-M1: a sub-agent in a worker thread calls an MCP tool and gets its real result, the image included", async () => {
    const [report] = await runLines(["fork|call mcp__test__image {}"]);
    expect(report).toMatch(/^error=false image=true text=a 1x1 png:/);
    // The sub-agent's own request carried the server's image to the model, unchanged.
    const forks = sim.requests().filter((record) => record.querySource === "agent:fork");
    expect(forks.some((record) => record.rawBody.includes(TEST_PNG_BASE64))).toBe(true);
    // The worker sent the parent's exact tool list, MCP tools included (R-F3).
    const parent = sim.requests().find((record) => record.querySource === "sdk");
    expect(JSON.parse(forks[0]!.rawBody).tools).toEqual(JSON.parse(parent!.rawBody).tools);
  });

  it("R-M1: the tools' annotations hold in the worker: in plan mode a sub-agent may call read-only echo, not add_note", async () => {
    const [echo, note] = await runLines(
      ['fork|call mcp__test__echo {"text":"hi"}', 'fork|call mcp__test__add_note {"note":"x"}'],
      "plan",
    );
    expect(echo).toMatch(/^error=false image=false text=hi/);
    expect(note).toMatch(/^error=true .*Plan mode allows only read-only tools/);
  });

  it("R-M1: an agent definition's tools mcp__test and disallowedTools mcp__test__image choose the sub-agent's tools", async () => {
    const [read, image, echo] = await runLines([
      'mcp-only|call Read {"file_path":"/etc/hostname"}',
      "mcp-only|call mcp__test__image {}",
      'mcp-only|call mcp__test__echo {"text":"allowed"}',
    ]);
    // R-K3: a custom agent is a conversation of its own, offered only its tools: the others do not exist for it.
    expect(read).toContain("No such tool available: Read");
    expect(image).toContain("No such tool available: mcp__test__image");
    expect(echo).toMatch(/^error=false image=false text=allowed/);
    const offered = sim
      .requests()
      .filter((record) => record.querySource === "agent:mcp-only")
      .map((record) => (JSON.parse(record.rawBody).tools as { name: string }[]).map((tool) => tool.name));
    for (const names of offered) {
      expect(names.every((name) => name.startsWith("mcp__test__"))).toBe(true);
      expect(names).toContain("mcp__test__echo");
      expect(names).not.toContain("mcp__test__image");
    }
  });
});
