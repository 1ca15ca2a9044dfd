import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonSchemaChecker } from "./json-schema-check.js";
import { exampleForSchema } from "./json-schema-example.js";
import { startSimulator } from "./server.js";
import { sequenceBrain } from "./testing/index.js";
import type { Brain, BrainReply, Simulator } from "./types.js";

/** R-D2: tool_choice, strict tools and structured outputs hold for every brain. */
let sim: Simulator;
let client: Anthropic;
let reply: BrainReply = { content: [{ type: "text", text: "plain text" }] };
const brain: Brain = () => reply;

beforeAll(async () => {
  sim = await startSimulator({ brain: (request) => brain(request) });
  client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

const weather: Anthropic.Tool = {
  name: "get_weather",
  description: "Weather of a city",
  input_schema: {
    type: "object",
    properties: {
      city: { type: "string", minLength: 2 },
      unit: { type: "string", enum: ["celsius", "fahrenheit"] },
      days: { type: "integer", minimum: 1, maximum: 7 },
    },
    required: ["city", "unit"],
    additionalProperties: false,
  },
};
const search: Anthropic.Tool = {
  name: "search",
  input_schema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
};
const checker = new JsonSchemaChecker();

function create(extra: Partial<Anthropic.MessageCreateParamsNonStreaming>, model = "claude-sonnet-4-6") {
  return client.messages.create({
    model,
    max_tokens: 1000,
    messages: [{ role: "user", content: "What is the weather in Paris?" }],
    tools: [weather, search],
    ...extra,
  });
}

describe("R-D2: tool_choice in every brain", () => {
  it("any: a brain that only talks still yields one tool call with schema-valid input, stop_reason tool_use", async () => {
    reply = { content: [{ type: "text", text: "I would rather chat." }] };
    const message = await create({ tool_choice: { type: "any" } });
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content.map((b) => b.type)).toEqual(["tool_use"]);
    const call = message.content[0] as Anthropic.ToolUseBlock;
    expect(call.name).toBe("get_weather");
    expect(checker.conforms(weather.input_schema, call.input)).toBe(true);
  });

  it("tool: the named tool is called (the brain's other calls and text are dropped); its own call of it is kept", async () => {
    reply = {
      content: [
        { type: "text", text: "Let me search first." },
        { type: "tool_use", name: "search", input: { query: "paris" } },
      ],
    };
    const forced = await create({ tool_choice: { type: "tool", name: "get_weather" } });
    expect(forced.content.map((b) => (b.type === "tool_use" ? b.name : b.type))).toEqual(["get_weather"]);
    expect(forced.stop_reason).toBe("tool_use");
    const own = await create({ tool_choice: { type: "tool", name: "search" } });
    expect((own.content[0] as Anthropic.ToolUseBlock).input).toEqual({ query: "paris" });
  });

  it("none: no tool calls, and a brain that only called tools still answers with text", async () => {
    reply = { content: [{ type: "tool_use", name: "search", input: { query: "paris" } }] };
    const message = await create({ tool_choice: { type: "none" } });
    expect(message.content.map((b) => b.type)).toEqual(["text"]);
    expect(message.stop_reason).toBe("end_turn");
  });

  it("disable_parallel_tool_use: at most one call under auto, exactly one under any", async () => {
    reply = {
      content: [
        { type: "tool_use", name: "search", input: { query: "a" } },
        { type: "tool_use", name: "search", input: { query: "b" } },
      ],
    };
    for (const type of ["auto", "any"] as const) {
      const message = await create({ tool_choice: { type, disable_parallel_tool_use: true } });
      expect(message.content.filter((b) => b.type === "tool_use")).toHaveLength(1);
    }
    const parallel = await create({ tool_choice: { type: "auto" } });
    expect(parallel.content.filter((b) => b.type === "tool_use")).toHaveLength(2);
  });

  it("a strict tool's input always validates; a non-strict tool keeps the brain's (invalid) input", async () => {
    reply = { content: [{ type: "tool_use", name: "get_weather", input: { city: 3 } }] };
    // A strict tool's schema keeps to the structured-outputs subset (no length or range limits).
    const strictWeather = {
      ...weather,
      strict: true,
      input_schema: {
        ...weather.input_schema,
        properties: {
          ...(weather.input_schema.properties as Record<string, unknown>),
          city: { type: "string" },
          days: { type: "integer" },
        },
      },
    };
    const strict = await create({ tools: [strictWeather] });
    const strictInput = (strict.content[0] as Anthropic.ToolUseBlock).input;
    expect(checker.conforms(strictWeather.input_schema, strictInput)).toBe(true);
    const loose = await create({});
    expect((loose.content[0] as Anthropic.ToolUseBlock).input).toEqual({ city: 3 });
  });

  it("adaptive thinking accepts a forced tool and skips thinking; manual thinking refuses it; Opus 5.5 refuses it under adaptive", async () => {
    reply = { content: [{ type: "text", text: "chat" }] };
    const adaptive = await create({ thinking: { type: "adaptive" }, tool_choice: { type: "any" } });
    expect(adaptive.content.map((b) => b.type)).toEqual(["tool_use"]);
    const unforced = await create({ thinking: { type: "adaptive" } });
    expect(unforced.content[0]?.type).toBe("thinking");
    await expect(
      create({
        thinking: { type: "enabled", budget_tokens: 1024 },
        max_tokens: 2000,
        tool_choice: { type: "any" },
      }),
    ).rejects.toThrow("Thinking may not be enabled when tool_choice forces tool use.");
    await expect(
      create({ thinking: { type: "adaptive" }, tool_choice: { type: "any" } }, "claude-opus-5-5"),
    ).rejects.toThrow("Thinking may not be enabled when tool_choice forces tool use.");
  });

  it("streams a forced call as input_json_delta fragments that parse to the same input", async () => {
    reply = { content: [{ type: "text", text: "chat" }] };
    const final = await client.messages
      .stream({
        model: "claude-sonnet-4-6",
        max_tokens: 1000,
        messages: [{ role: "user", content: "weather?" }],
        tools: [weather],
        tool_choice: { type: "tool", name: "get_weather" },
      })
      .finalMessage();
    expect(final.stop_reason).toBe("tool_use");
    expect(checker.conforms(weather.input_schema, (final.content[0] as Anthropic.ToolUseBlock).input)).toBe(
      true,
    );
  });
});

describe("R-D2: structured outputs", () => {
  const person = {
    type: "object",
    properties: {
      name: { type: "string" },
      age: { type: "integer", minimum: 0 },
      email: { type: "string", format: "email" },
      tags: { type: "array", items: { type: "string" }, minItems: 2 },
      role: { anyOf: [{ type: "null" }, { $ref: "#/$defs/role" }] },
    },
    required: ["name", "age", "tags", "role"],
    additionalProperties: false,
    $defs: { role: { type: "string", enum: ["admin", "user"] } },
  };

  // What a request may carry: the structured-outputs subset (no range, length or minItems > 1).
  const sendablePerson = {
    ...person,
    properties: {
      ...person.properties,
      age: { type: "integer" },
      tags: { type: "array", items: { type: "string" }, minItems: 1 },
    },
  };

  it("output_config.format: a brain's prose becomes JSON valid for the schema; JSON that fits is kept", async () => {
    reply = { content: [{ type: "text", text: "Here is a person, sort of." }] };
    const format = { type: "json_schema" as const, schema: sendablePerson };
    const generated = await client.messages.create({
      model: "claude-sonnet-4-6",
      max_tokens: 1000,
      messages: [{ role: "user", content: "Make up a person." }],
      output_config: { format },
    } as Anthropic.MessageCreateParamsNonStreaming);
    const text = (generated.content[0] as Anthropic.TextBlock).text;
    expect(checker.conforms(sendablePerson, JSON.parse(text))).toBe(true);

    const own = { name: "Ada", age: 36, tags: ["math", "engines"], role: "admin" };
    reply = { content: [{ type: "text", text: JSON.stringify(own) }] };
    const kept = await client.messages.create({
      model: "claude-sonnet-4-6",
      max_tokens: 1000,
      messages: [{ role: "user", content: "Make up a person." }],
      output_config: { format },
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(JSON.parse((kept.content[0] as Anthropic.TextBlock).text)).toEqual(own);
  });

  it("max_tokens 0 with output_config.format is a 400 (api doc §1)", async () => {
    await expect(
      client.messages.create({
        model: "claude-sonnet-4-6",
        max_tokens: 0,
        messages: [{ role: "user", content: "x" }],
        output_config: { format: { type: "json_schema", schema: sendablePerson } },
      } as Anthropic.MessageCreateParamsNonStreaming),
    ).rejects.toThrow(/max_tokens: 0/);
  });

  it.each([
    [{ type: "string", format: "date-time", minLength: 25 }],
    [{ type: "number", exclusiveMinimum: 2, maximum: 10, multipleOf: 0.5 }],
    [{ type: "integer", exclusiveMaximum: 0 }],
    [{ type: "array", prefixItems: [{ type: "boolean" }, { const: 7 }], items: { type: "null" } }],
    [
      {
        allOf: [
          { properties: { a: { type: "string" } }, required: ["a"] },
          { properties: { b: { type: "integer" } } },
        ],
      },
    ],
    [
      {
        type: ["null", "object"],
        properties: { x: { $ref: "#/definitions/x" } },
        definitions: { x: { type: "string", maxLength: 3 } },
      },
    ],
    [person],
  ])("the generated value of %j validates and is the same every time", (schema) => {
    const value = exampleForSchema(schema);
    expect(checker.conforms(schema, value)).toBe(true);
    expect(exampleForSchema(schema)).toEqual(value);
  });

  it("any with only a versioned client tool: a call of it with the tool's input shape, not a text", async () => {
    reply = { content: [{ type: "text", text: "I would rather chat." }] };
    const message = await client.messages.create({
      model: "claude-sonnet-4-6",
      max_tokens: 500,
      messages: [{ role: "user", content: "list the files" }],
      tools: [{ type: "bash_20250124", name: "bash" }],
      tool_choice: { type: "any" },
    });
    expect(message.stop_reason).toBe("tool_use");
    const call = message.content[0] as Anthropic.ToolUseBlock;
    expect([call.type, call.name, typeof (call.input as { command?: unknown }).command]).toEqual([
      "tool_use",
      "bash",
      "string",
    ]);
  });

  it("every brain is constrained, a scripted one too (sequenceBrain)", async () => {
    const scripted = await startSimulator({ brain: sequenceBrain([[{ type: "text", text: "hi" }]]) });
    try {
      const other = new Anthropic({ apiKey: "k", baseURL: scripted.url, maxRetries: 0 });
      const message = await other.messages.create({
        model: "claude-haiku-4-5",
        max_tokens: 500,
        messages: [{ role: "user", content: "go" }],
        tools: [search],
        tool_choice: { type: "any" },
      });
      expect(message.content.map((b) => b.type)).toEqual(["tool_use"]);
    } finally {
      await scripted.close();
    }
  });
});
