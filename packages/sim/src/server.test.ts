import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { parseFaultSpec } from "./faults.js";
import { resolveModel } from "./model-registry.js";
import { startSimulator } from "./server.js";
import { signThinking } from "./thinking-signature.js";
import { countTokens } from "./tokenizer.js";
import type { Simulator } from "./types.js";

const MODEL = "claude-sonnet-4-6"; // 1024-token cache minimum, 128K output, $3/$15, manual and adaptive thinking
let sim: Simulator;

afterEach(async () => {
  await sim?.close();
});

function client(s: Simulator, extra: Partial<ConstructorParameters<typeof Anthropic>[0]> = {}): Anthropic {
  return new Anthropic({ apiKey: "test-key", baseURL: s.url, maxRetries: 0, ...extra });
}

/** A request whose system prompt of `words` tokens carries a 5m breakpoint. */
function cachedSystemBody(words: number) {
  return {
    model: MODEL,
    max_tokens: 10,
    system: [
      { type: "text" as const, text: "word ".repeat(words), cache_control: { type: "ephemeral" as const } },
    ],
    messages: [{ role: "user" as const, content: "x" }],
  };
}

describe("the simulator over HTTP with the SDK", () => {
  it("answers messages.create with a JSON message, usage and a request-id", async () => {
    sim = await startSimulator({ brain: () => ({ content: [{ type: "text", text: "hello there" }] }) });
    const { data, response } = await client(sim)
      .messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(data.content).toEqual([{ type: "text", text: "hello there" }]);
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

describe("R-D1: models endpoint", () => {
  it("lists the registry (with overrides) and retrieves by id or alias", async () => {
    sim = await startSimulator({
      models: [{ ...resolveModel("claude-haiku-4-5")!, id: "tiny", aliases: [] }],
    });
    const c = client(sim);
    const ids: string[] = [];
    for await (const model of c.models.list()) ids.push(model.id);
    expect(ids).toContain("claude-sonnet-4-5-20250929");
    expect(ids).toContain("tiny");
    expect((await c.models.retrieve("claude-haiku-4-5")).id).toBe("claude-haiku-4-5-20251001");
    await expect(c.models.retrieve("nope")).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it("R-D1: a retired model answers 404 not_found_error, as the API does; the Models API still lists it", async () => {
    sim = await startSimulator();
    const c = client(sim);
    for (const model of ["claude-opus-4-1-20250805", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929"]) {
      const error = await c.messages
        .create({ model, max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.NotFoundError);
      expect((error as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
        error: { type: "not_found_error", message: `model: ${model}` },
      });
    }
  });

  it("a malformed model id in the path is a 404 with the error body, not a 500", async () => {
    sim = await startSimulator();
    const response = await fetch(`${sim.url}/v1/models/%E0`, {
      headers: { "x-api-key": "test-key", "anthropic-version": "2023-06-01" },
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });
});

describe("count_tokens", () => {
  it("counts with the same tokenizer, without max_tokens", async () => {
    sim = await startSimulator();
    const c = client(sim);
    const body = {
      model: MODEL,
      system: "You are terse.",
      messages: [{ role: "user" as const, content: "Summarize packages/sim/src/index.ts please" }],
    };
    const counted = await c.messages.countTokens(body);
    const created = await c.messages.create({ ...body, max_tokens: 100 });
    expect(counted.input_tokens).toBe(created.usage.input_tokens);
    expect(counted.input_tokens).toBe(countTokens("You are terse.") + countTokens(body.messages[0]!.content));
    expect(sim.requests()[0]?.path).toBe("/v1/messages/count_tokens");
  });

  it("Opus 4.7+ counts about 30% more tokens for the same text (api doc §7)", async () => {
    sim = await startSimulator({ brain: () => ({ content: [{ type: "text", text: "word ".repeat(100) }] }) });
    const c = client(sim);
    const messages = [{ role: "user" as const, content: "word ".repeat(1000) }];
    expect((await c.messages.countTokens({ model: "claude-opus-4-6", messages })).input_tokens).toBe(1000);
    expect((await c.messages.countTokens({ model: "claude-opus-4-7", messages })).input_tokens).toBe(1300);
    const reply = await c.messages.create({ model: "claude-opus-4-7", max_tokens: 1000, messages });
    expect(reply.usage).toMatchObject({ input_tokens: 1300, output_tokens: 130 });
    const cut = await c.messages.create({ model: "claude-opus-4-7", max_tokens: 65, messages });
    expect(cut.stop_reason).toBe("max_tokens");
    expect(cut.usage.output_tokens).toBeLessThanOrEqual(65);
  });

  it("counts tool definitions, except deferred ones", async () => {
    sim = await startSimulator();
    const c = client(sim);
    const tool = { name: "Read", description: "Reads a file", input_schema: { type: "object" as const } };
    const messages = [{ role: "user" as const, content: "x" }];
    const bare = (await c.messages.countTokens({ model: MODEL, messages })).input_tokens;
    const withTool = (await c.messages.countTokens({ model: MODEL, messages, tools: [tool] })).input_tokens;
    const deferred = (
      await c.messages.countTokens({
        model: MODEL,
        messages,
        // Not every tool deferred: that is a 400 (tool search tool page).
        tools: [tool, { ...tool, name: "Grep", defer_loading: true }],
      } as never)
    ).input_tokens;
    expect(withTool - bare).toBe(
      countTokens("Read") + countTokens("Reads a file") + countTokens('{"type":"object"}'),
    );
    expect(deferred).toBe(withTool);
  });
});

describe("R-D3: thinking from earlier turns", () => {
  it("count_tokens ignores it; older models strip it from the prompt, Opus 4.5+ (here 4.6) keeps it", async () => {
    sim = await startSimulator();
    const c = client(sim);
    const thought = "private reasoning of the first turn";
    const messages: Anthropic.MessageParam[] = [
      { role: "user", content: "q1" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: thought, signature: signThinking(thought) },
          { type: "text", text: "a1" },
        ],
      },
      { role: "user", content: "q2" },
    ];
    const withoutThinking = 3; // q1, a1, q2
    const counted = await c.messages.countTokens({ model: MODEL, messages });
    expect(counted.input_tokens).toBe(withoutThinking);
    const haiku45 = await c.messages.create({ model: "claude-haiku-4-5", max_tokens: 10, messages });
    expect(haiku45.usage.input_tokens).toBe(withoutThinking);
    const opus46 = await c.messages.create({ model: "claude-opus-4-6", max_tokens: 10, messages });
    expect(opus46.usage.input_tokens).toBe(withoutThinking + countTokens(thought));
  });
});

describe("observability: the simulator's request records", () => {
  // Haiku 5.5's overview page (https://platform.claude.com/docs/en/models/haiku-5-5/overview):
  // $0.10 / $0.50 per MTok for prompts up to 100,000 tokens, $0.50 / $2.50 over; the prompt counts
  // its cache writes and reads, and the band prices every token of the request.
  it("R-D1: Haiku 5.5 is priced by its prompt's band, cached tokens counted in the prompt", async () => {
    sim = await startSimulator({ brain: () => ({ content: [{ type: "text", text: "done" }] }) });
    const c = client(sim);
    const haiku = "claude-haiku-5-5";
    await c.messages.create({
      model: haiku,
      max_tokens: 20,
      messages: [{ role: "user", content: "one two" }],
    });
    const long = { ...cachedSystemBody(80_000), model: haiku, max_tokens: 20 };
    const written = await c.messages.create(long);
    const read = await c.messages.create(long);
    const [short, write, hit] = sim.requests();
    const su = short?.usage;
    expect(short?.costUsd).toBeCloseTo(
      ((su?.input_tokens ?? 0) * 0.1 + (su?.output_tokens ?? 0) * 0.5) / 1e6,
      12,
    );
    // The uncached part alone is short: only counting the cache write puts the prompt over the band.
    expect(written.usage.input_tokens).toBeLessThan(100_000);
    expect(written.usage.cache_creation_input_tokens).toBeGreaterThan(100_000);
    const over = (input: number, writes: number, reads: number, output: number) =>
      (input * 0.5 + writes * 0.5 * 1.25 + reads * 0.5 * 0.1 + output * 2.5) / 1e6;
    const w = written.usage;
    expect(write?.costUsd).toBeCloseTo(
      over(w.input_tokens, w.cache_creation_input_tokens ?? 0, 0, w.output_tokens),
      12,
    );
    const r = read.usage;
    expect(r.cache_read_input_tokens).toBe(w.cache_creation_input_tokens);
    expect(hit?.costUsd).toBeCloseTo(
      over(r.input_tokens, 0, r.cache_read_input_tokens ?? 0, r.output_tokens),
      12,
    );
  });

  // Opus 5.5's overview page: cache read $0.20 / MTok on $4 input (0.05×, not the usual 0.1×).
  it("R-D1: a cache read is priced at the model's own share (Opus 5.5: $0.20 per MTok)", async () => {
    sim = await startSimulator({ brain: () => ({ content: [{ type: "text", text: "done" }] }) });
    const c = client(sim);
    const body = { ...cachedSystemBody(1500), model: "claude-opus-5-5", max_tokens: 20 };
    await c.messages.create(body);
    const second = await c.messages.create(body);
    const u = second.usage;
    expect(u.cache_read_input_tokens).toBeGreaterThan(0);
    expect(sim.requests()[1]?.costUsd).toBeCloseTo(
      (u.input_tokens * 4 + (u.cache_read_input_tokens ?? 0) * 0.2 + u.output_tokens * 20) / 1e6,
      12,
    );
  });

  it("records usage, cost by the model's prices, and serves them at GET /_sim/requests", async () => {
    sim = await startSimulator({ brain: () => ({ content: [{ type: "text", text: "done" }] }) });
    const c = client(sim);
    const body = {
      ...cachedSystemBody(1500),
      max_tokens: 50,
      messages: [{ role: "user" as const, content: "one two" }],
    };
    const first = await c.messages.create(body);
    const second = await c.messages.create(body);
    expect(first.usage).toMatchObject({
      cache_creation_input_tokens: 1500,
      cache_read_input_tokens: 0,
      input_tokens: 2,
    });
    expect(first.usage.cache_creation).toEqual({
      ephemeral_5m_input_tokens: 1500,
      ephemeral_1h_input_tokens: 0,
    });
    expect(second.usage).toMatchObject({
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 1500,
      input_tokens: 2,
    });
    const [a, b] = sim.requests();
    // Sonnet 4.6: $3 in, $15 out per MTok; write ×1.25, read ×0.1.
    expect(a?.costUsd).toBeCloseTo((2 * 3 + 1500 * 3 * 1.25 + 1 * 15) / 1e6, 12);
    expect(b?.costUsd).toBeCloseTo((2 * 3 + 1500 * 3 * 0.1 + 1 * 15) / 1e6, 12);
    expect(a?.usage?.output_tokens).toBe(1);
    const res = await fetch(`${sim.url}/_sim/requests`);
    const served = (await res.json()) as { id: string; model: string; usage: unknown }[];
    expect(served.map((r) => r.id)).toEqual([a?.id, b?.id]);
    expect(served[0]?.model).toBe(MODEL);
    const health = await fetch(`${sim.url}/_sim/health`);
    expect(await health.json()).toMatchObject({ status: "ok" });
    expect(sim.requests()).toHaveLength(2);
  });

  it("records the x-forkloop-query-source header and the exact raw body", async () => {
    sim = await startSimulator();
    await client(sim).messages.create(
      { model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "x" }] },
      { headers: { "x-forkloop-query-source": "agent:explore" } },
    );
    const [record] = sim.requests();
    expect(record?.querySource).toBe("agent:explore");
    expect(JSON.parse(record?.rawBody ?? "")).toEqual({
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: "user", content: "x" }],
    });
    expect(record?.startedAt).toBeLessThanOrEqual(record?.firstByteAt ?? 0);
  });

  it("the brain sees the key each request authenticated with (one simulator, a script per client)", async () => {
    const keys: string[] = [];
    sim = await startSimulator({
      brain: (request) => {
        keys.push(request.apiKey);
        return { content: [{ type: "text", text: `for ${request.apiKey}` }] };
      },
    });
    const request = { model: MODEL, max_tokens: 10, messages: [{ role: "user" as const, content: "hi" }] };
    const a = await client(sim, { apiKey: "key-a" }).messages.create(request);
    const b = await client(sim, { apiKey: "key-b" }).messages.create(request);
    expect(keys).toEqual(["key-a", "key-b"]);
    expect([a.content, b.content]).toEqual([
      [{ type: "text", text: "for key-a" }],
      [{ type: "text", text: "for key-b" }],
    ]);
  });

  it("recordLimit keeps only the latest records", async () => {
    sim = await startSimulator({ recordLimit: 2 });
    for (const content of ["a", "b", "c"]) {
      await client(sim).messages.create({
        model: MODEL,
        max_tokens: 10,
        messages: [{ role: "user", content }],
      });
    }
    expect(sim.requests().map((r) => JSON.parse(r.rawBody).messages[0].content)).toEqual(["b", "c"]);
  });

  it("clearRequests empties the log", async () => {
    sim = await startSimulator();
    await client(sim).messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: "user", content: "x" }],
    });
    sim.clearRequests();
    expect(sim.requests()).toEqual([]);
  });
});

describe("R-D3: prompt caching over HTTP", () => {
  it("simultaneous identical requests all miss; the next one reads", async () => {
    // A brain that answers none of the three until all three have arrived: the requests are
    // simultaneous by construction, not by a time to first token a loaded machine can outrun.
    let arrived = 0;
    let allArrived: () => void = () => {};
    const together = new Promise<void>((resolve) => {
      allArrived = resolve;
    });
    sim = await startSimulator({
      brain: async () => {
        if (++arrived === 3) allArrived();
        await together;
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const c = client(sim);
    const body = cachedSystemBody(2000);
    const parallel = await Promise.all([1, 2, 3].map(() => c.messages.create(body)));
    expect(parallel.map((m) => m.usage.cache_read_input_tokens)).toEqual([0, 0, 0]);
    expect(parallel.map((m) => m.usage.cache_creation_input_tokens)).toEqual([2000, 2000, 2000]);
    const after = await c.messages.create(body);
    expect(after.usage.cache_read_input_tokens).toBe(2000);
  });

  it("a request refused with a 529 writes nothing to the cache", async () => {
    sim = await startSimulator({ faults: parseFaultSpec("529@1") });
    const c = client(sim);
    const body = cachedSystemBody(1500);
    await expect(c.messages.create(body)).rejects.toBeInstanceOf(Anthropic.OverloadedError);
    expect((await c.messages.create(body)).usage.cache_creation_input_tokens).toBe(1500);
    expect((await c.messages.create(body)).usage.cache_read_input_tokens).toBe(1500);
  });

  it("the cache TTL runs on the injected clock", async () => {
    let now = 1_000_000;
    sim = await startSimulator({ clock: () => now });
    const c = client(sim);
    const body = {
      model: MODEL,
      max_tokens: 10,
      messages: [
        {
          role: "user" as const,
          content: [
            {
              type: "text" as const,
              text: "word ".repeat(1024),
              cache_control: { type: "ephemeral" as const },
            },
          ],
        },
      ],
    };
    await c.messages.create(body);
    now += 4 * 60_000;
    expect((await c.messages.create(body)).usage.cache_read_input_tokens).toBe(1024);
    now += 5 * 60_000 + 1;
    expect((await c.messages.create(body)).usage.cache_read_input_tokens).toBe(0);
  });
});

describe("rate limits per API key", () => {
  it("requests per minute: 429 with retry-after, anthropic-ratelimit-* headers, the window slides on the clock", async () => {
    let now = Date.parse("2026-11-30T08:00:00Z");
    sim = await startSimulator({ clock: () => now, rateLimits: { requestsPerMinute: 2 } });
    const c = client(sim);
    const body = { model: MODEL, max_tokens: 10, messages: [{ role: "user" as const, content: "x" }] };
    const ok = await c.messages.create(body).withResponse();
    expect(ok.response.headers.get("anthropic-ratelimit-requests-limit")).toBe("2");
    expect(ok.response.headers.get("anthropic-ratelimit-requests-remaining")).toBe("1");
    expect(ok.response.headers.get("anthropic-ratelimit-requests-reset")).toBe("2026-11-30T08:01:00.000Z");
    await c.messages.create(body);
    const error = await c.messages.create(body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const limited = error as InstanceType<typeof Anthropic.RateLimitError>;
    expect(limited.headers.get("retry-after")).toBe("60");
    expect(limited.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    // Another key has its own budget.
    const other = new Anthropic({ apiKey: "other-key", baseURL: sim.url, maxRetries: 0 });
    await other.messages.create(body);
    now += 60_001;
    await c.messages.create(body);
  });

  it("input tokens per minute count input and cache writes, not cache reads", async () => {
    const now = 0;
    sim = await startSimulator({ clock: () => now, rateLimits: { inputTokensPerMinute: 3000 } });
    const c = client(sim);
    const body = cachedSystemBody(1200);
    const first = await c.messages.create(body).withResponse(); // 1200 written + 1 input
    expect(first.response.headers.get("anthropic-ratelimit-input-tokens-remaining")).toBe("2000");
    for (let i = 0; i < 5; i++) await c.messages.create(body); // reads: 1 token each
    const big = { ...body, messages: [{ role: "user" as const, content: "word ".repeat(2000) }] };
    await expect(c.messages.create(big)).rejects.toBeInstanceOf(Anthropic.RateLimitError);
  });
});

describe("determinism", () => {
  it("the same request and seed give the same reply; tool ids are stable", async () => {
    sim = await startSimulator({ seed: 3 });
    const c = client(sim);
    const body = {
      model: MODEL,
      max_tokens: 200,
      tools: [
        {
          name: "Read",
          input_schema: { type: "object" as const, properties: { file_path: { type: "string" } } },
        },
      ],
      messages: [{ role: "user" as const, content: "Summarize src/index.ts" }],
    };
    const a = await c.messages.create(body);
    const b = await c.messages.create(body);
    expect(a.content).toEqual(b.content);
    expect(a.id).not.toBe(b.id);
    const other = await startSimulator({ seed: 4 });
    try {
      const d = await client(other).messages.create(body);
      const idOf = (m: Anthropic.Message) =>
        (m.content.find((x) => x.type === "tool_use") as Anthropic.ToolUseBlock).id;
      expect(idOf(d)).not.toBe(idOf(a));
    } finally {
      await other.close();
    }
  });
});
