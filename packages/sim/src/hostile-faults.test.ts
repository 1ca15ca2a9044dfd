import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { FaultSpecError, parseFaultSpec, pickFault } from "./faults.js";
import { CAPTIVE_PORTAL_PAGE } from "./garbled-reply.js";
import { UNKNOWN_STOP_REASON } from "./hostile-reply.js";
import { startSimulator } from "./server.js";
import type { Brain, Simulator, SimulatorOptions } from "./types.js";

/**
 * The faults a broken proxy or a hostile model brings (R-R1–R-R3, R-R9, R-R11), each shown on the
 * wire: real HTTP, the official SDK where it can read the reply, raw fetch where the point is that
 * no client could.
 */
const MODEL = "claude-sonnet-4-6";
const PROBE = { name: "Probe", description: "probe", input_schema: { type: "object" as const } };
let sim: Simulator | undefined;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(options: SimulatorOptions): Promise<{ sim: Simulator; client: Anthropic }> {
  sim = await startSimulator({ brain: () => ({ content: [{ type: "text", text: "fine" }] }), ...options });
  return {
    sim,
    client: new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0, logLevel: "off" }),
  };
}

const params = { model: MODEL, max_tokens: 1000, messages: [{ role: "user" as const, content: "hi" }] };

/** The raw SSE text of a streamed request, read to its end. */
async function rawStream(
  s: Simulator,
  body: object = params,
): Promise<Response & { text(): Promise<string> }> {
  return fetch(`${s.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ ...body, stream: true }),
  });
}

/** Every event the SDK's raw stream yields, and the error that ended it (if one did). */
async function sdkEvents(client: Anthropic, body: object = params) {
  const events: Anthropic.RawMessageStreamEvent[] = [];
  try {
    const stream = await client.messages.create({ ...(body as typeof params), stream: true });
    for await (const event of stream) events.push(event);
    return { events, error: null };
  } catch (error) {
    return { events, error: error as Error };
  }
}

describe("the hostile fault kinds: parsing", () => {
  it("R-R3: depth (deep_input) and bytes (huge_block) are options, scheduled and random; each a whole number ≥ 1", () => {
    expect(
      parseFaultSpec(
        "deep_input@1:depth=100,huge_block@2:bytes=70000,drip@3+:slow_ms=5;random:seed=1,pdrip=0.5,depth=7",
      ),
    ).toEqual({
      schedule: [
        { kind: "deep_input", from: 1, to: 1, depth: 100 },
        { kind: "huge_block", from: 2, to: 2, bytes: 70_000 },
        { kind: "drip", from: 3, to: Number.POSITIVE_INFINITY, slowMs: 5 },
      ],
      random: { seed: 1, probabilities: { drip: 0.5 }, depth: 7 },
    });
    expect(pickFault(parseFaultSpec("deep_input@1,huge_block@2"), 1)).toMatchObject({ depth: 5_000 });
    expect(pickFault(parseFaultSpec("deep_input@1,huge_block@2"), 2)).toMatchObject({
      bytes: 5 * 1024 * 1024,
    });
    expect(() => parseFaultSpec("deep_input@1:depth=0")).toThrow(FaultSpecError);
    expect(() => parseFaultSpec("huge_block@1:bytes=1.5")).toThrow(/bytes must be a whole number/);
    for (const kind of [
      "malformed_sse",
      "truncated_json",
      "html_200",
      "drip",
      "duplicate_ids",
      "deep_input",
      "unknown_stop_reason",
      "huge_block",
      "off_schema",
    ]) {
      expect(parseFaultSpec(`${kind}@1`).schedule?.[0]?.kind).toBe(kind);
    }
  });
});

describe("the hostile fault kinds over HTTP", () => {
  it("R-R1: malformed_sse sends lines that are no SSE, then an event whose data is not JSON: the SDK cannot read it", async () => {
    const { sim: s, client } = await start({ faults: parseFaultSpec("malformed_sse@1-2") });
    const raw = await rawStream(s);
    expect([raw.status, raw.headers.get("content-type")]).toEqual([200, "text/event-stream; charset=utf-8"]);
    expect(await raw.text()).toBe("this is not SSE\n\nevent: message_start\ndata: {not json\n\n");
    const { events, error } = await sdkEvents(client);
    expect(events).toEqual([]);
    expect(error?.message).toMatch(/JSON/);
    expect(s.requests().map((record) => [record.status, record.fault])).toEqual([
      [200, "malformed_sse"],
      [200, "malformed_sse"],
    ]);
  });

  it("R-R1: truncated_json sends a message_start cut off mid-JSON, then ends the stream", async () => {
    const { sim: s, client } = await start({ faults: parseFaultSpec("truncated_json@1-2") });
    const text = await (await rawStream(s)).text();
    expect(text).toMatch(
      /^event: message_start\ndata: \{"type":"message_start","message":\{"id":"msg_sim_[^"]+","type":"mess\n\n$/,
    );
    const { events, error } = await sdkEvents(client);
    expect(events).toEqual([]);
    expect(error?.message).toMatch(/JSON/);
  });

  it("R-R9: html_200 answers 200 with a captive portal's HTML page, streamed or not", async () => {
    const { sim: s, client } = await start({ faults: parseFaultSpec("html_200@1-2") });
    const raw = await rawStream(s);
    expect([raw.status, raw.headers.get("content-type"), await raw.text()]).toEqual([
      200,
      "text/html",
      CAPTIVE_PORTAL_PAGE,
    ]);
    const response = await client.messages.create(params).asResponse();
    expect(response.headers.get("content-type")).toBe("text/html");
    expect(await response.text()).toContain("Welcome to the hotel Wi-Fi");
    expect(s.requests().map((record) => record.fault)).toEqual(["html_200", "html_200"]);
  });

  it("R-R11: drip starts a text reply and sends one delta every slow_ms, for ever: no message_stop", async () => {
    const { sim: s, client } = await start({ faults: parseFaultSpec("drip@1:slow_ms=5") });
    const events: string[] = [];
    const texts: string[] = [];
    const stream = await client.messages.create({ ...params, stream: true });
    for await (const event of stream) {
      events.push(event.type);
      if (event.type === "content_block_delta" && event.delta.type === "text_delta")
        texts.push(event.delta.text);
      if (texts.length === 20) break; // the client gives up; the server never would
    }
    expect(events.slice(0, 2)).toEqual(["message_start", "content_block_start"]);
    expect(new Set(texts)).toEqual(new Set(["drip "]));
    expect(events).not.toContain("message_stop");
    expect(s.requests()[0]).toMatchObject({ status: 200, fault: "drip" });
  });

  it("R-R3: unknown_stop_reason sends the reply with a stop_reason no API version has", async () => {
    const { client } = await start({ faults: parseFaultSpec("unknown_stop_reason@1-2") });
    const streamed = await client.messages.stream(params).finalMessage();
    expect([streamed.content, streamed.stop_reason]).toEqual([
      [{ type: "text", text: "fine" }],
      UNKNOWN_STOP_REASON,
    ]);
    expect((await client.messages.create(params)).stop_reason).toBe(UNKNOWN_STOP_REASON);
  });

  it("R-R3: huge_block sends one text block of `bytes` characters in 64 KiB deltas", async () => {
    const { client } = await start({ faults: parseFaultSpec("huge_block@1:bytes=200000") });
    const { events, error } = await sdkEvents(client);
    expect(error).toBeNull();
    const deltas = events.flatMap((event) =>
      event.type === "content_block_delta" && event.delta.type === "text_delta" ? [event.delta.text] : [],
    );
    expect(deltas.map((delta) => delta.length)).toEqual([65_536, 65_536, 65_536, 200_000 - 3 * 65_536]);
    expect(deltas.join("")).toBe("x".repeat(200_000));
    expect(events.at(-1)?.type).toBe("message_stop");
  });

  it("R-R3: duplicate_ids sends the reply's tool call twice under one id, then under the history's last tool_use id", async () => {
    const brain: Brain = () => ({ content: [{ type: "tool_use", name: "Probe", input: { n: 1 } }] });
    const { sim: s, client } = await start({ brain, faults: parseFaultSpec("duplicate_ids@1") });
    const message = await client.messages
      .stream({
        ...params,
        tools: [PROBE],
        messages: [
          { role: "user", content: "probe" },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "toolu_earlier", name: "Probe", input: {} }],
          },
          {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "toolu_earlier", content: "probed" }],
          },
        ],
      })
      .finalMessage();
    const calls = message.content.flatMap((block) => (block.type === "tool_use" ? [block] : []));
    expect(calls.map((call) => [call.name, call.input])).toEqual([
      ["Probe", { n: 1 }],
      ["Probe", { n: 1 }],
      ["Probe", { n: 1 }],
    ]);
    expect(calls[0]?.id).toBe(calls[1]?.id);
    expect(calls[2]?.id).toBe("toolu_earlier");
    expect(message.stop_reason).toBe("tool_use");
    expect(s.requests()[0]?.fault).toBe("duplicate_ids");
  });

  it("R-R3: deep_input nests the tool call's input `depth` levels deep; a reply with no call gets one of the first tool", async () => {
    const { client } = await start({ faults: parseFaultSpec("deep_input@1-2") });
    const { events, error } = await sdkEvents(client, { ...params, tools: [PROBE] });
    expect(error).toBeNull();
    const opened = events.find(
      (event) => event.type === "content_block_start" && event.content_block.type === "tool_use",
    );
    expect(opened?.type === "content_block_start" && opened.content_block).toMatchObject({
      type: "tool_use",
      name: "Probe",
      input: {},
    });
    const json = events
      .flatMap((event) =>
        event.type === "content_block_delta" && event.delta.type === "input_json_delta"
          ? [event.delta.partial_json]
          : [],
      )
      .join("");
    expect(json).toBe(`${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`);
    const whole = await client.messages.create({ ...params, tools: [PROBE] });
    let depth = 0;
    for (
      let value: unknown = whole.content.find((block) => block.type === "tool_use")?.input;
      typeof value === "object";
      depth++
    )
      value = (value as { a: unknown }).a;
    expect([depth, whole.stop_reason]).toEqual([5000, "tool_use"]);
  });

  it("off_schema sends the brain's prose although output_config.format asks for JSON; without it the reply is JSON", async () => {
    const prose = "Here is the summary: it is fine.";
    const { client } = await start({
      brain: () => ({ content: [{ type: "text", text: prose }] }),
      faults: parseFaultSpec("off_schema@1"),
    });
    const format = {
      type: "json_schema" as const,
      schema: {
        type: "object",
        properties: { summary: { type: "string" } },
        required: ["summary"],
        additionalProperties: false,
      },
    };
    const ask = () =>
      client.messages.create({
        ...params,
        output_config: { format },
      } as Anthropic.MessageCreateParamsNonStreaming);
    expect(((await ask()).content[0] as Anthropic.TextBlock).text).toBe(prose);
    expect(() => JSON.parse(prose)).toThrow();
    const constrained = ((await ask()).content[0] as Anthropic.TextBlock).text;
    expect(JSON.parse(constrained)).toHaveProperty("summary");
  });

  it("a brain may ask for a fault with its parameters (drawn per request): drop after 1 event", async () => {
    const { sim: s, client } = await start({
      brain: () => ({
        content: [{ type: "text", text: "word ".repeat(50) }],
        fault: { kind: "drop", afterEvents: 1 },
      }),
    });
    const { events, error } = await sdkEvents(client);
    expect(events.map((event) => event.type)).toEqual(["message_start"]);
    expect(error?.message).toMatch(/terminated/);
    expect(s.requests()[0]?.fault).toBe("drop");
  });
});
