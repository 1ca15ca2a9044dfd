import { type Simulator, startSimulator } from "@forkloop/sim";
import { ChatAnthropic } from "@langchain/anthropic";
import { tool } from "@langchain/core/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";

/**
 * R-D2: LangChain's `@langchain/anthropic` (its own pinned @anthropic-ai/sdk 0.x)
 * against the simulator's built-in policy over real HTTP: invoke, bindTools,
 * withStructuredOutput (forced tool call and output_config.format) succeed; a bad request fails
 * with the API's status and error type.
 */
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
});

const chat = (model = "claude-haiku-4-5") =>
  new ChatAnthropic({ model, apiKey: "compat-key", anthropicApiUrl: sim.url, maxRetries: 0 });

const readFile = tool(async ({ file_path }) => `contents of ${file_path}`, {
  name: "read_file",
  description: "Read a file",
  schema: z.object({ file_path: z.string() }),
});

const movie = z.object({
  title: z.string(),
  year: z.number().int().min(1888).max(2100),
  genres: z.array(z.enum(["drama", "comedy", "horror"])).min(1),
  sequel: z.boolean(),
});

describe("R-D2: @langchain/anthropic", () => {
  it("invoke: an AIMessage with the simulator's text and usage", async () => {
    const message = await chat().invoke("Hello from LangChain");
    expect(String(message.content)).toContain("forkloop simulator");
    expect(message.response_metadata.usage).toMatchObject({ input_tokens: expect.any(Number) });
  });

  it("bindTools: a prompt naming a file yields a read_file tool call", async () => {
    const message = await chat().bindTools([readFile]).invoke("Summarize src/index.ts");
    expect(message.tool_calls?.map((c) => [c.name, c.args])).toEqual([
      ["read_file", { file_path: "src/index.ts" }],
    ]);
  });

  it('bindTools with tool_choice "any": a tool call even for a prompt that names no file', async () => {
    const message = await chat().bindTools([readFile], { tool_choice: "any" }).invoke("Hello");
    expect(message.tool_calls).toHaveLength(1);
    expect(message.tool_calls?.[0]?.name).toBe("read_file");
  });

  it("stream, and bindTools with tool_choice by name while streaming: text chunks, then that tool's call", async () => {
    let text = "";
    for await (const chunk of await chat().stream("Hello")) text += String(chunk.content);
    expect(text).toContain("forkloop simulator");
    const other = tool(async () => "x", {
      name: "other",
      description: "Another tool",
      schema: z.object({ n: z.number() }),
    });
    const bound = chat().bindTools([other, readFile], { tool_choice: "read_file" });
    let merged: Awaited<ReturnType<typeof bound.invoke>> | undefined;
    for await (const chunk of await bound.stream("Hello")) merged = merged ? merged.concat(chunk) : chunk;
    expect(merged?.tool_calls?.map((c) => c.name)).toEqual(["read_file"]);
    expect(typeof merged?.tool_calls?.[0]?.args.file_path).toBe("string");
  });

  it("withStructuredOutput (function calling, a forced tool): an object valid for the zod schema", async () => {
    const result = await chat().withStructuredOutput(movie, { name: "movie" }).invoke("Invent a movie");
    expect(movie.safeParse(result).success).toBe(true);
    const body = JSON.parse(sim.requests().at(-1)?.rawBody ?? "{}");
    expect(body.tool_choice).toEqual({ type: "tool", name: "movie" });
  });

  it('withStructuredOutput method "jsonSchema" (output_config.format): an object valid for the schema', async () => {
    const result = await chat("claude-sonnet-4-6")
      .withStructuredOutput(movie, { method: "jsonSchema" })
      .invoke("Invent a movie");
    expect(movie.safeParse(result).success).toBe(true);
  });

  it("a request the API refuses fails with its status and type (max_tokens above the model's)", async () => {
    const model = new ChatAnthropic({
      model: "claude-haiku-4-5",
      apiKey: "compat-key",
      anthropicApiUrl: sim.url,
      maxRetries: 0,
      maxTokens: 200_000,
      // Without streaming the SDK itself refuses a max_tokens this large before sending.
      streaming: true,
    });
    const error = (await model.invoke("hi").catch((e: unknown) => e)) as { status?: number; message: string };
    expect(error.status).toBe(400);
    expect(error.message).toContain("max_tokens: 200000 > 64000");
  });
});
