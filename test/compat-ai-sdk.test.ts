import { createAnthropic } from "@ai-sdk/anthropic";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { APICallError, generateObject, generateText, stepCountIs, streamObject, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";

/**
 * R-D2: the Vercel AI SDK (`ai` + `@ai-sdk/anthropic`, a client nobody here wrote)
 * against the simulator's built-in policy over real HTTP. Each call succeeds, or fails, as the
 * AI SDK documents for the Anthropic API.
 */
let sim: Simulator;
let anthropic: ReturnType<typeof createAnthropic>;

beforeAll(async () => {
  sim = await startSimulator();
  anthropic = createAnthropic({ baseURL: `${sim.url}/v1`, apiKey: "compat-key" });
});
afterAll(async () => {
  await sim.close();
});

const model = () => anthropic("claude-sonnet-4-6");
const readFile = tool({
  description: "Read a file of the project",
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => `# Notes\n\nexport function ${path.replace(/\W/g, "_")}() {}\n`,
});
const lookupInput = z.object({ word: z.string(), limit: z.number().int().min(1).max(5) });
const lookup = tool({
  description: "Look a word up",
  inputSchema: lookupInput,
  execute: async ({ word }) => `${word}: a word`,
});

describe("R-D2: ai + @ai-sdk/anthropic", () => {
  it("generateText with tools: the policy calls the tool, the SDK runs it, the next step summarises it", async () => {
    const result = await generateText({
      model: model(),
      tools: { readFile },
      stopWhen: stepCountIs(3),
      prompt: "Summarize notes.md",
    });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]?.toolCalls.map((c) => [c.toolName, c.input])).toEqual([
      ["readFile", { path: "notes.md" }],
    ]);
    expect(result.text).toContain("Summary of notes.md");
    expect(result.text).toContain("forkloop simulator");
    expect(result.finishReason).toBe("stop");
  });

  it('toolChoice "required": a tool call whose input the SDK validates against the zod schema', async () => {
    const result = await generateText({
      model: model(),
      tools: { lookup },
      toolChoice: "required",
      prompt: "Hello there",
    });
    expect(result.finishReason).toBe("tool-calls");
    expect(result.toolCalls).toHaveLength(1);
    expect(lookupInput.safeParse(result.toolCalls[0]?.input).success).toBe(true);
    expect(result.toolResults).toHaveLength(1);
  });

  it('toolChoice "none": text only, no tool call', async () => {
    const result = await generateText({
      model: model(),
      tools: { readFile },
      toolChoice: "none",
      prompt: "Summarize notes.md",
    });
    expect(result.toolCalls).toEqual([]);
    expect(result.text).not.toBe("");
  });

  it("generateObject: a JSON object that parses with the zod schema (output_config.format)", async () => {
    const schema = z.object({
      title: z.string(),
      rating: z.number().int().min(1).max(5),
      tags: z.array(z.string()).min(1),
      kind: z.enum(["book", "film"]),
    });
    const result = await generateObject({ model: model(), schema, prompt: "Review a book" });
    expect(schema.safeParse(result.object).success).toBe(true);
    const body = JSON.parse(sim.requests().at(-1)?.rawBody ?? "{}");
    expect(body.output_config?.format?.type).toBe("json_schema");
  });

  it("streamObject, and toolChoice naming one tool: a streamed object valid for the schema; that tool's call", async () => {
    const schema = z.object({ title: z.string(), tags: z.array(z.string()).min(1) });
    const streamed = streamObject({ model: model(), schema, prompt: "Review a book" });
    for await (const _partial of streamed.partialObjectStream) {
      // Partial objects as they arrive; the final one is checked below.
    }
    expect(schema.safeParse(await streamed.object).success).toBe(true);
    const named = await generateText({
      model: model(),
      tools: { readFile, lookup },
      toolChoice: { type: "tool", toolName: "lookup" },
      prompt: "Hello",
    });
    expect(named.toolCalls.map((c) => c.toolName)).toEqual(["lookup"]);
    expect(lookupInput.safeParse(named.toolCalls[0]?.input).success).toBe(true);
  });

  it("streamText: the text arrives in several deltas and the stream finishes with usage", async () => {
    const result = streamText({ model: model(), prompt: "Say something about caching." });
    const parts: string[] = [];
    for await (const delta of result.textStream) parts.push(delta);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.join("")).toContain("forkloop simulator");
    expect((await result.usage).inputTokens).toBeGreaterThan(0);
    expect(await result.finishReason).toBe("stop");
  });

  it("an unknown model fails as the API does: APICallError 404 not_found_error, not retried", async () => {
    const before = sim.requests().length;
    const error = await generateText({ model: anthropic("claude-unknown-9"), prompt: "hi" }).catch(
      (e: unknown) => e,
    );
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(404);
    expect((error as APICallError).responseBody).toContain("not_found_error");
    expect(sim.requests().length - before).toBe(1);
  });
});
