import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator } from "./server.js";
import type { Simulator } from "./types.js";

const MODEL = "claude-sonnet-4-5";
let sim: Simulator;

afterEach(async () => {
  await sim?.close();
});

function client(s: Simulator, extra: Partial<ConstructorParameters<typeof Anthropic>[0]> = {}): Anthropic {
  return new Anthropic({ apiKey: "test-key", baseURL: s.url, maxRetries: 0, ...extra });
}

describe("the simulator over HTTP with the SDK (issue 2 point 1)", () => {
  it("answers messages.create with a JSON message, usage and a request-id", async () => {
    sim = await startSimulator({ brain: () => ({ content: [{ type: "text", text: "hello there" }] }) });
    const { data, response } = await client(sim)
      .messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(data.content).toEqual([{ type: "text", text: "hello there", citations: null }]);
    expect(data.stop_reason).toBe("end_turn");
    expect(data.usage.input_tokens).toBe(1);
    expect(data.usage.output_tokens).toBe(4); // "hello" = 2, "there" = 2 (4 chars per token)
    expect(response.headers.get("request-id")).toMatch(/^req_/);
    expect(response.headers.get("content-type")).toContain("application/json");
    const [record] = sim.requests();
    expect(record?.status).toBe(200);
    expect(record?.path).toBe("/v1/messages");
    expect(record?.headers.authorization).toBe("Bearer test-key");
  });

  it("streams with MessageStream events and finalMessage()", async () => {
    sim = await startSimulator({
      brain: () => ({
        content: [
          { type: "text", text: "Reading the file now, one moment please." },
          { type: "tool_use", name: "Read", input: { file_path: "src/a-rather-long-name/index.ts" } },
        ],
      }),
    });
    const stream = client(sim).messages.stream({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: "user", content: "read src/index.ts" }],
    });
    const texts: string[] = [];
    const json: string[] = [];
    stream.on("text", (t) => texts.push(t));
    stream.on("inputJson", (partial) => json.push(partial));
    const message = await stream.finalMessage();
    expect(texts.join("")).toBe("Reading the file now, one moment please.");
    expect(json.length).toBeGreaterThanOrEqual(2);
    expect(message.stop_reason).toBe("tool_use");
    const tool = message.content[1];
    expect(tool?.type === "tool_use" && tool.input).toEqual({ file_path: "src/a-rather-long-name/index.ts" });
    expect(tool?.type === "tool_use" && tool.id).toMatch(/^toolu_/);
  });
});
