import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FaultSpecError, parseFaultSpec, pickFault } from "./faults.js";
import { startSimulator } from "./server.js";
import type { Simulator, SimulatorOptions } from "./types.js";

const MODEL = "claude-haiku-4-5";
const LONG_TEXT = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
let sim: Simulator | undefined;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(options: SimulatorOptions = {}): Promise<Simulator> {
  sim = await startSimulator({ brain: () => ({ content: [{ type: "text", text: LONG_TEXT }] }), ...options });
  return sim;
}

function client(s: Simulator, maxRetries = 0): Anthropic {
  return new Anthropic({ apiKey: "test-key", baseURL: s.url, maxRetries });
}

const params = { model: MODEL, max_tokens: 1000, messages: [{ role: "user" as const, content: "hi" }] };

describe("fault injection: parseFaultSpec", () => {
  it("parses a schedule by request index, with ranges and options", () => {
    expect(
      parseFaultSpec(
        "429@1,529@2-3,mid_stream_error@4,drop@5,max_tokens@6,slow@7:slow_ms=50,500@8+:retry_after=0.2",
      ),
    ).toEqual({
      schedule: [
        { kind: "429", from: 1, to: 1 },
        { kind: "529", from: 2, to: 3 },
        { kind: "mid_stream_error", from: 4, to: 4 },
        { kind: "drop", from: 5, to: 5 },
        { kind: "max_tokens", from: 6, to: 6 },
        { kind: "slow", from: 7, to: 7, slowMs: 50 },
        { kind: "500", from: 8, to: Number.POSITIVE_INFINITY, retryAfterSeconds: 0.2 },
      ],
    });
  });

  it("R-R1: drop takes after_events, scheduled and random; it must be a whole number ≥ 1", () => {
    expect(parseFaultSpec("drop@2:after_events=4; random:seed=3,pdrop=0.05,after_events=2")).toEqual({
      schedule: [{ kind: "drop", from: 2, to: 2, afterEvents: 4 }],
      random: { seed: 3, probabilities: { drop: 0.05 }, afterEvents: 2 },
    });
    expect(() => parseFaultSpec("drop@1:after_events=0")).toThrow(/after_events must be a whole number/);
    expect(() => parseFaultSpec("random:seed=1,after_events=1.5")).toThrow(/after_events/);
  });

  it("parses seeded random faults, alone or joined to a schedule with ';'", () => {
    expect(parseFaultSpec("random:seed=7,p429=0.1,p529=0.05")).toEqual({
      random: { seed: 7, probabilities: { "429": 0.1, "529": 0.05 } },
    });
    const both = parseFaultSpec("drop@1; random:seed=1,pdrop=0.5,retry_after=2");
    expect(both.schedule).toHaveLength(1);
    expect(both.random).toEqual({ seed: 1, probabilities: { drop: 0.5 }, retryAfterSeconds: 2 });
  });

  it.each([
    ["boom@1", /unknown kind "boom"/],
    ["429", /expected KIND@N/],
    ["429@3-2", /1-based and ascending/],
    ["200@1", /status must be 400-599/],
    ["429@1:wait=3", /unknown option "wait"/],
    ["random:seed=1,p429=2", /within 0..1/],
    ["random:seed=1,p429=0.7,p529=0.7", /add up to 1.4 > 1/],
    ["random:colour=3", /unknown key "colour"/],
  ])("rejects %s with a clear error", (text, message) => {
    expect(() => parseFaultSpec(text)).toThrow(FaultSpecError);
    expect(() => parseFaultSpec(text)).toThrow(message);
  });

  it("random faults are the same for the same seed and request index", () => {
    const spec = parseFaultSpec("random:seed=7,p429=0.3,p529=0.2");
    const run = () => Array.from({ length: 200 }, (_, i) => pickFault(spec, i + 1)?.kind ?? null);
    const first = run();
    expect(run()).toEqual(first);
    const fired = first.filter((k) => k !== null).length;
    expect(fired).toBeGreaterThan(60);
    expect(fired).toBeLessThan(140);
    const other = Array.from(
      { length: 200 },
      (_, i) => pickFault(parseFaultSpec("random:seed=8,p429=0.3,p529=0.2"), i + 1)?.kind ?? null,
    );
    expect(other).not.toEqual(first);
  });
});

describe("fault injection: faults over HTTP with the SDK", () => {
  it("the SDK retries a 429 honouring a short retry-after, then succeeds", async () => {
    const s = await start({ faults: parseFaultSpec("429@1:retry_after=0.01") });
    const message = await client(s, 2).messages.create(params);
    expect(message.content[0]?.type).toBe("text");
    const [first, second] = s.requests();
    expect(first).toMatchObject({ status: 429, fault: "429", error: { type: "rate_limit_error" } });
    expect(second).toMatchObject({ status: 200, fault: null });
    expect(second?.headers["x-stainless-retry-count"]).toBe("1");
  });

  it("a 429 fault carries retry-after and the API's error body", async () => {
    const s = await start({ faults: parseFaultSpec("429@1,429@2:retry_after=3") });
    const post = () =>
      fetch(`${s.url}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" },
        body: JSON.stringify(params),
      });
    const first = await post();
    expect(first.status).toBe(429);
    expect(first.headers.get("retry-after")).toBe("1");
    expect(await first.json()).toMatchObject({
      type: "error",
      error: { type: "rate_limit_error" },
      request_id: first.headers.get("request-id"),
    });
    expect((await post()).headers.get("retry-after")).toBe("3");
  });

  it("each HTTP status fault maps to the SDK's error class", async () => {
    const s = await start({
      faults: parseFaultSpec("400@1,401@2,403@3,404@4,409@5,413@6,429@7:retry_after=0.01,500@8,504@9,529@10"),
    });
    const expected = [
      Anthropic.BadRequestError,
      Anthropic.AuthenticationError,
      Anthropic.PermissionDeniedError,
      Anthropic.NotFoundError,
      Anthropic.ConflictError,
      Anthropic.ContentTooLargeError,
      Anthropic.RateLimitError,
      Anthropic.InternalServerError,
      Anthropic.GatewayTimeoutError,
      Anthropic.OverloadedError,
    ];
    for (const errorClass of expected) {
      await expect(client(s).messages.create(params)).rejects.toBeInstanceOf(errorClass);
    }
    expect(s.requests().map((r) => r.error?.type)).toEqual([
      "invalid_request_error",
      "authentication_error",
      "permission_error",
      "not_found_error",
      "conflict_error",
      "request_too_large",
      "rate_limit_error",
      "api_error",
      "timeout_error",
      "overloaded_error",
    ]);
  });

  it("prompt_too_long is the API's 400 for a prompt over the window, in its words (api doc §4), without building one", async () => {
    const s = await start({ faults: parseFaultSpec("prompt_too_long@1") });
    const refused = client(s).messages.create(params);
    await expect(refused).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(refused).rejects.toThrow(/prompt is too long: \d+ tokens > \d+ maximum/);
    expect(s.requests()[0]).toMatchObject({
      status: 400,
      fault: "prompt_too_long",
      error: { type: "invalid_request_error" },
    });
  });

  it("529 overloaded is retried by the SDK", async () => {
    const s = await start({ faults: parseFaultSpec("529@1:retry_after=0.01") });
    const message = await client(s, 1).messages.create(params);
    expect(message.type).toBe("message");
    expect(s.requests().map((r) => r.status)).toEqual([529, 200]);
  });

  it("a mid-stream error event: the SDK throws, does not retry, the record says 200 + fault", async () => {
    const s = await start({ faults: parseFaultSpec("mid_stream_error@1") });
    const stream = client(s, 2).messages.stream(params);
    const texts: string[] = [];
    stream.on("text", (t) => texts.push(t));
    await expect(stream.finalMessage()).rejects.toThrow(/Overloaded/);
    expect(texts.length).toBeGreaterThan(0);
    expect(s.requests()).toHaveLength(1);
    expect(s.requests()[0]).toMatchObject({
      status: 200,
      fault: "mid_stream_error",
      error: { type: "overloaded_error" },
    });
  });

  it("R-R1: a dropped stream breaks after it started, also with latency off (default: half the reply)", async () => {
    const s = await start({ faults: parseFaultSpec("drop@1") });
    const events: string[] = [];
    const stream = await client(s).messages.create({ ...params, stream: true });
    await expect(
      (async () => {
        for await (const event of stream) events.push(event.type);
      })(),
    ).rejects.toThrow(/terminated/);
    expect(events[0]).toBe("message_start");
    expect(events).toContain("content_block_delta");
    expect(events).not.toContain("message_stop");
    expect(s.requests()[0]?.fault).toBe("drop");
  });

  it("R-R1: drop after_events=N cuts the stream after exactly N events", async () => {
    const s = await start({
      faults: parseFaultSpec("drop@1:after_events=3;random:seed=1,pdrop=1,after_events=1"),
    });
    const seen = async (): Promise<string[]> => {
      const events: string[] = [];
      const stream = await client(s).messages.create({ ...params, stream: true });
      await expect(
        (async () => {
          for await (const event of stream) events.push(event.type);
        })(),
      ).rejects.toThrow();
      return events;
    };
    // What reached the client before the cut: message_start, ping (the SDK skips it), block start.
    expect(await seen()).toEqual(["message_start", "content_block_start"]);
    expect(await seen()).toEqual(["message_start"]);
  });

  it("a dropped non-streaming request is a connection error the SDK retries", async () => {
    const s = await start({ faults: parseFaultSpec("drop@1") });
    const message = await client(s, 1).messages.create(params);
    expect(message.type).toBe("message");
    expect(s.requests().map((r) => r.fault)).toEqual(["drop", null]);
  });

  it("a max_tokens cut returns part of the reply with stop_reason max_tokens", async () => {
    const s = await start({ faults: parseFaultSpec("max_tokens@1") });
    const cut = await client(s).messages.create(params);
    const full = await client(s).messages.create(params);
    expect(cut.stop_reason).toBe("max_tokens");
    expect(full.stop_reason).toBe("end_turn");
    const text = (m: Anthropic.Message) => (m.content[0]?.type === "text" ? m.content[0].text : "");
    expect(text(full)).toBe(LONG_TEXT);
    expect(LONG_TEXT.startsWith(text(cut))).toBe(true);
    expect(cut.usage.output_tokens).toBeLessThan(full.usage.output_tokens);
    expect(s.requests()[0]?.fault).toBe("max_tokens_cut");
  });

  it("a real max_tokens limit cuts the reply too", async () => {
    const s = await start();
    const message = await client(s).messages.create({ ...params, max_tokens: 5 });
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.usage.output_tokens).toBeLessThanOrEqual(5);
  });

  it("a slow stream still delivers the whole reply", async () => {
    const s = await start({ faults: parseFaultSpec("slow@1:slow_ms=1") });
    const message = await client(s).messages.stream(params).finalMessage();
    expect(message.content[0]?.type === "text" && message.content[0].text).toBe(LONG_TEXT);
    expect(s.requests()[0]?.fault).toBe("slow");
  });

  it("a brain (or scenario rule) can ask for a fault", async () => {
    const s = await start({ brain: () => ({ content: [], fault: "529" }) });
    await expect(client(s).messages.create(params)).rejects.toBeInstanceOf(Anthropic.OverloadedError);
  });

  it("setFaults replaces the faults of a running simulator", async () => {
    const s = await start();
    s.setFaults(parseFaultSpec("500@2"));
    await client(s).messages.create(params);
    await expect(client(s).messages.create(params)).rejects.toBeInstanceOf(Anthropic.InternalServerError);
  });

  it("R-R1, R-R11: the stall faults — silence sends nothing, headers_then_silence only headers, ping_only pings every slow_ms; the client's deadline ends each", async () => {
    expect(parseFaultSpec("silence@1,headers_then_silence@2,ping_only@3+:slow_ms=5").schedule).toEqual([
      { kind: "silence", from: 1, to: 1 },
      { kind: "headers_then_silence", from: 2, to: 2 },
      { kind: "ping_only", from: 3, to: Number.POSITIVE_INFINITY, slowMs: 5 },
    ]);
    const s = await start({
      faults: parseFaultSpec("silence@1,headers_then_silence@2,ping_only@3+:slow_ms=5"),
    });
    // The SDK's own timeout is the deadline that ends a silent server (R-R2).
    const silent = client(s).messages.create({ ...params, stream: true }, { timeout: 300 });
    await expect(silent).rejects.toBeInstanceOf(Anthropic.APIConnectionTimeoutError);
    const body = JSON.stringify({ ...params, stream: true });
    const post = () =>
      fetch(`${s.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" },
        body,
      });
    const headersOnly = await post();
    expect([headersOnly.status, headersOnly.headers.get("content-type")]).toEqual([
      200,
      "text/event-stream; charset=utf-8",
    ]);
    const pinging = await post();
    const reader = pinging.body?.getReader();
    let text = "";
    while (!text.includes("event: ping\n", text.indexOf("event: ping") + 1)) {
      const chunk = await reader?.read();
      if (chunk?.done !== false) break;
      text += new TextDecoder().decode(chunk.value);
    }
    expect(
      text
        .split("\n\n")
        .filter(Boolean)
        .every((event) => event.startsWith("event: ping")),
    ).toBe(true);
    expect(s.requests().map((record) => record.fault)).toEqual([
      "silence",
      "headers_then_silence",
      "ping_only",
    ]);
    await reader?.cancel();
    await headersOnly.body?.cancel();
  });

  it("aborting mid-stream: the SDK raises APIUserAbortError and the simulator stops writing", async () => {
    const s = await start({ faults: parseFaultSpec("slow@1:slow_ms=20") });
    const stream = client(s).messages.stream(params);
    stream.on("text", () => stream.abort());
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    await vi.waitFor(() => expect(s.requests()[0]?.error?.type).toBe("client_closed"));
  });
});
