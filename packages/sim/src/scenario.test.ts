import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptedBrain } from "./brains/scripted.js";
import { loadScenario, parseScenario, ScenarioError } from "./scenario.js";
import { startSimulator } from "./server.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sim-scenario-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SCENARIO = {
  name: "read then answer",
  rules: [
    {
      match: { querySource: "compact" },
      reply: { content: [{ type: "text", text: "<summary>compacted</summary>" }] },
    },
    {
      match: { turn: 0, lastUserText: "/read (\\S+)/i" },
      reply: {
        content: [
          { type: "thinking", thinking: "Need the file." },
          { type: "text", text: "Reading." },
          { type: "tool_use", name: "Read", input: { file_path: "a.ts" } },
        ],
      },
    },
    {
      match: { lastToolResult: "ENOENT" },
      reply: { content: [{ type: "text", text: "The file is missing." }] },
    },
    {
      match: { turn: { min: 1 } },
      reply: { content: [{ type: "text", text: "Done." }], stop_reason: "end_turn" },
    },
    { match: { lastUserText: "flaky" }, fault: "529", times: 1 },
    { match: { lastUserText: "flaky" }, reply: { content: [{ type: "text", text: "recovered" }] } },
    { match: { model: "claude-haiku-4-5" }, reply: { content: [{ type: "text", text: "haiku" }] } },
  ],
};

describe("scenario files", () => {
  it("loads a valid file", async () => {
    const path = join(dir, "ok.json");
    await writeFile(path, JSON.stringify(SCENARIO));
    const scenario = await loadScenario(path);
    expect(scenario.rules).toHaveLength(7);
  });

  it.each([
    ["not json", "{", /bad\.json: invalid JSON/],
    ["no rules", JSON.stringify({ rules: [] }), /bad\.json: rules: .*>=1/],
    [
      "bad turn",
      JSON.stringify({ rules: [{ match: { turn: "x" }, reply: { content: [] } }] }),
      /bad\.json: rules\.0\.match\.turn: /,
    ],
    [
      "bad block",
      JSON.stringify({ rules: [{ reply: { content: [{ type: "image" }] } }] }),
      /bad\.json: rules\.0\.reply\.content\.0/,
    ],
    [
      "unknown key",
      JSON.stringify({ rules: [{ match: { turns: 1 }, reply: { content: [] } }] }),
      /bad\.json: rules\.0\.match: /,
    ],
    [
      "neither reply nor fault",
      JSON.stringify({ rules: [{ match: {} }] }),
      /bad\.json: rules\.0: a rule needs a reply, a fault or both/,
    ],
    ["bad fault", JSON.stringify({ rules: [{ fault: "explode" }] }), /bad\.json: rules\.0\.fault/],
    [
      "image bytes not base64",
      JSON.stringify({
        rules: [{ reply: { content: [] } }],
        web: { images: { "https://x.example/a.png": "%%" } },
      }),
      /bad\.json: web\.images\.https:\/\/x\.example\/a\.png/,
    ],
    [
      "bad regex",
      JSON.stringify({ rules: [{ match: { lastUserText: "/(/" }, reply: { content: [] } }] }),
      /bad\.json: rules\.0\.match\.lastUserText: invalid regular expression/,
    ],
  ])("names the file and the JSON path: %s", async (_name, text, message) => {
    const path = join(dir, "bad.json");
    await writeFile(path, text);
    const error = await loadScenario(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScenarioError);
    expect((error as Error).message).toMatch(message);
  });

  // Vision page (https://platform.claude.com/docs/en/build-with-claude/vision): an image is
  // over the limit past 8000 px on a side, a URL image as an inline one; the simulator reads a
  // URL image's bytes from the scenario's web.images.
  it("R-D2: a scenario's web.images supplies URL images' bytes, measured as inline images are", async () => {
    const wide = Buffer.concat([
      Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"),
      Buffer.from([0, 0, 0x23, 0x28, 0, 0, 0, 10, 8, 6, 0, 0, 0]),
      Buffer.alloc(4),
    ]).toString("base64"); // a PNG header of 9000×10
    const url = "https://images.example/wide.png";
    const scenario = {
      rules: [{ reply: { content: [{ type: "text", text: "seen" }] } }],
      web: { images: { [url]: wide } },
    };
    const sim = await startSimulator({ scenario: parseScenario(JSON.stringify(scenario)) });
    try {
      const client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
      const ask = (source: Anthropic.URLImageSource) =>
        client.messages.create({
          model: "claude-sonnet-4-6",
          max_tokens: 100,
          messages: [
            {
              role: "user",
              content: [
                { type: "image", source, transformations: { oversized_image: "error" } },
                { type: "text", text: "What is it?" },
              ],
            },
          ],
        });
      const error = await ask({ type: "url", url }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
        error: { details: { error_code: "image_dimensions_too_large", paths: ["messages.0.content.0"] } },
      });
      // A URL the fixtures do not hold is not measured.
      const other = await ask({ type: "url", url: "https://images.example/other.png" });
      expect(other.content).toEqual([{ type: "text", text: "seen" }]);
    } finally {
      await sim.close();
    }
  });

  it("a missing file is a clear error", async () => {
    await expect(loadScenario(join(dir, "nope.json"))).rejects.toThrow(/nope\.json: cannot read scenario/);
  });

  it("drives a conversation over HTTP: first match wins, turn/text/tool-result/querySource/model matchers, times, faults", async () => {
    const sim = await startSimulator({ scenario: parseScenario(JSON.stringify(SCENARIO)) });
    try {
      const client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
      const model = "claude-opus-4-5";
      const first = await client.messages.create({
        model,
        max_tokens: 4000,
        tools: [{ name: "Read", input_schema: { type: "object" } }],
        thinking: { type: "enabled", budget_tokens: 1024 },
        messages: [{ role: "user", content: "Please READ a.ts" }],
      });
      expect(first.content.map((b) => b.type)).toEqual(["thinking", "text", "tool_use"]);
      expect(first.stop_reason).toBe("tool_use");
      const tool = first.content[2] as Anthropic.ToolUseBlock;
      const history = [
        { role: "user" as const, content: "Please READ a.ts" },
        { role: "assistant" as const, content: first.content },
      ];
      const missing = await client.messages.create({
        model,
        max_tokens: 4000,
        tools: [{ name: "Read", input_schema: { type: "object" } }],
        thinking: { type: "enabled", budget_tokens: 1024 },
        messages: [
          ...history,
          {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: tool.id, content: "ENOENT: a.ts", is_error: true }],
          },
        ],
      });
      expect(missing.content.at(-1)).toMatchObject({ type: "text", text: "The file is missing." });
      const found = await client.messages.create({
        model,
        max_tokens: 100,
        tools: [{ name: "Read", input_schema: { type: "object" } }],
        messages: [
          ...history.slice(0, 1),
          { role: "assistant", content: [tool] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: tool.id, content: "1\tx" }] },
        ],
      });
      expect(found.content).toMatchObject([{ type: "text", text: "Done." }]);
      const compact = await client.messages.create(
        { model, max_tokens: 100, messages: [{ role: "user", content: "summarise" }] },
        { headers: { "x-forkloop-query-source": "compact" } },
      );
      expect(compact.content).toMatchObject([{ text: "<summary>compacted</summary>" }]);
      await expect(
        client.messages.create({ model, max_tokens: 100, messages: [{ role: "user", content: "flaky" }] }),
      ).rejects.toBeInstanceOf(Anthropic.OverloadedError);
      const recovered = await client.messages.create({
        model,
        max_tokens: 100,
        messages: [{ role: "user", content: "flaky" }],
      });
      expect(recovered.content).toMatchObject([{ text: "recovered" }]);
      const haiku = await client.messages.create({
        model: "claude-haiku-4-5",
        max_tokens: 100,
        messages: [{ role: "user", content: "hm" }],
      });
      expect(haiku.content).toMatchObject([{ text: "haiku" }]);
      // No rule matches and there is no fallback: a 500 naming the turn.
      const error = await client.messages
        .create({ model, max_tokens: 100, messages: [{ role: "user", content: "hm" }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.InternalServerError);
      expect(sim.requests().at(-1)?.error?.message).toMatch(/no rule matches turn 0/);
    } finally {
      await sim.close();
    }
  });

  it("a fallback answers what no rule matches", () => {
    const brain = scriptedBrain(
      parseScenario(
        JSON.stringify({
          rules: [{ match: { turn: 5 }, reply: { content: [] } }],
          fallback: { content: [{ type: "text", text: "fb" }] },
        }),
      ),
    );
    const reply = brain({
      body: { model: "m", max_tokens: 1, messages: [] },
      turnIndex: 0,
      lastUserText: null,
      lastToolResults: [],
      toolNames: [],
      querySource: null,
      apiKey: "",
      seed: 0,
    });
    expect(reply).toEqual({ content: [{ type: "text", text: "fb" }] });
  });
});
