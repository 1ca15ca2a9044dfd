import { createRequire } from "node:module";
import { parseFaultSpec } from "@forkloop/sim";
import { describe, expect, it } from "vitest";
import { loadAnthropicSdk } from "./anthropic-sdk.js";
import type { LoopEvent } from "./loop-events.js";
import { classifyError, isInterruptedConnection } from "./model-failure.js";
import { query } from "./query.js";
import { FAST_RETRY, simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect, testTool, toolPairingViolations } from "./testing/index.js";

// The SDK as forkloop loads it on first use (R-V2).
const Anthropic = await loadAnthropicSdk();

const sims = useSimulator();

/** A run against the simulator with `faults` (its --faults syntax); unfaulted requests answer "recovered". */
async function againstFaults(faults: string, retry = {}) {
  const handle = await sims.start([{ content: [{ type: "text", text: "recovered" }] }], {
    faults: parseFaultSpec(faults),
  });
  const run = await collect(query(simParams(handle, { retry: { ...FAST_RETRY, ...retry } })));
  return { ...run, faults: () => handle.messageRequests().map((record) => record.fault) };
}

const retries = (events: readonly LoopEvent[]) =>
  events.flatMap((event) => (event.type === "api_retry" ? [event] : []));

describe("R-R1: interrupted streams are retried like a 529", () => {
  it("a stream the simulator drops mid-way (latency off) is retried, api_retry visible", async () => {
    const handle = await sims.start([{ content: [{ type: "text", text: "word ".repeat(40) }] }], {
      faults: parseFaultSpec("drop@1"),
    });
    const { events, terminal } = await collect(query(simParams(handle)));
    expect(terminal.reason).toBe("completed");
    expect(handle.messageRequests().map((record) => record.fault)).toEqual(["drop", null]);
    // The first attempt streamed events before the cut: the drop happened after the stream started.
    const firstStreamEvents = events.findIndex((event) => event.type === "api_retry");
    expect(events.slice(0, firstStreamEvents).some((event) => event.type === "stream_event")).toBe(true);
    expect(retries(events)).toHaveLength(1);
    expect(retries(events)[0]?.error).toMatch(/terminated/);
  });

  it("R-L12 holds: tools started from a dropped stream are discarded, the retry's tools answered once", async () => {
    let runs = 0;
    const probe = testTool({
      name: "Probe",
      safe: true,
      call: async () => {
        runs++;
        return { content: "probed" };
      },
    });
    const handle = await sims.start(
      [
        {
          content: [
            { type: "tool_use", name: "Probe", input: {} },
            { type: "text", text: "more text after the tool call ".repeat(10) },
          ],
        },
        { content: [{ type: "text", text: "finished" }] },
      ],
      // Request 1 is cut after the tool_use block is complete (the executor has started it).
      { faults: parseFaultSpec("drop@1:after_events=6") },
    );
    const { terminal } = await collect(query(simParams(handle, { tools: [probe] })));
    expect(terminal.reason).toBe("completed");
    const records = handle.messageRequests();
    expect(records.map((record) => record.fault)).toEqual(["drop", null, null]);
    for (const record of records) {
      expect(toolPairingViolations(JSON.parse(record.rawBody).messages)).toEqual([]);
    }
    const results = terminal.messages.flatMap((message) =>
      message.type === "user" && Array.isArray(message.message.content)
        ? message.message.content.filter((block) => block.type === "tool_result")
        : [],
    );
    expect(results).toHaveLength(1);
    expect(runs).toBeGreaterThanOrEqual(1);
  });

  it.each([
    ["a drop after 3 events", "drop@1:after_events=3", "stream_interrupted"],
    ["malformed SSE", "malformed_sse@1", "malformed"],
    ["truncated JSON", "truncated_json@1", "malformed"],
  ] as const)("the simulator's %s is retried, then the good reply wins", async (_name, bad, expected) => {
    const { events, terminal, faults } = await againstFaults(bad);
    expect(terminal.reason).toBe("completed");
    expect(faults()).toEqual([bad.slice(0, bad.indexOf("@")), null]);
    expect(retries(events)).toHaveLength(1);
    expect(retries(events)[0]?.error).toMatch(
      expected === "stream_interrupted" ? /terminated|other side closed/ : new RegExp(expected),
    );
  });
});

describe("R-R9: a wrong endpoint is said at once", () => {
  it("a 200 that is no event stream (a captive portal's HTML page) is not retried: model_error naming what came back", async () => {
    const { events, terminal, faults } = await againstFaults("html_200@1+");
    expect(faults()).toEqual(["html_200"]);
    expect(retries(events)).toEqual([]);
    expect(terminal.reason).toBe("model_error");
    expect(terminal.error).toMatchObject({
      type: "wrong_endpoint",
      message:
        'the endpoint answered 200 with text/html (an HTML page: "Welcome to the hotel Wi-Fi") instead of an event stream',
    });
  });
});

describe("R-R9: an error that is not the API's own says what it is", () => {
  const html = (title: string) =>
    `<!DOCTYPE html><html><head><title>${title}</title></head><body><p>${"x ".repeat(500)}</p></body></html>`;
  const headers = new Headers({ "content-type": "text/html" });

  it("an untyped 404 (a web server's page) is wrong_endpoint, not retried; the API's own 404 stays a missing model", () => {
    expect(
      classifyError(Anthropic.APIError.generate(404, undefined, html("404 Not Found"), headers)),
    ).toMatchObject({
      type: "wrong_endpoint",
      message: 'the endpoint answered 404 to POST /v1/messages (an HTML page titled "404 Not Found")',
      retryable: false,
    });
    const api = classifyError(
      Anthropic.APIError.generate(
        404,
        { type: "error", error: { type: "not_found_error", message: "model: claude-nope" } },
        undefined,
        new Headers(),
      ),
    );
    expect(api).toMatchObject({ type: "not_found_error", message: "model: claude-nope", retryable: false });
  });

  it("any other untyped error (a proxy's 502 page) is named by its title, not its markup, and retried as before", () => {
    expect(
      classifyError(Anthropic.APIError.generate(502, undefined, html("502 Bad Gateway"), headers)),
    ).toMatchObject({
      type: "http_502",
      message: '502 an HTML page titled "502 Bad Gateway"',
      retryable: true,
    });
  });
});

describe("R-R2: deadlines for headers and for the gap between events", () => {
  it("no response headers: the attempt is aborted after headersTimeoutMs and retried", async () => {
    const { events, terminal, faults } = await againstFaults("silence@1", { headersTimeoutMs: 200 });
    expect(terminal.reason).toBe("completed");
    expect(faults()).toEqual(["silence", null]);
    expect(retries(events)[0]?.error).toBe("no response headers within 200 ms");
  });

  it("headers then silence: the idle timeout aborts the attempt and retries it", async () => {
    const { events, terminal } = await againstFaults("headers_then_silence@1", { streamIdleTimeoutMs: 200 });
    expect(terminal.reason).toBe("completed");
    expect(retries(events)[0]?.error).toBe("the stream sent no event (pings aside) for 200 ms");
  });

  it("ping-only streams do not count as activity: retries run out, the run ends as model_error", async () => {
    const { events, terminal, faults } = await againstFaults("ping_only@1+:slow_ms=20", {
      streamIdleTimeoutMs: 150,
      maxRetries: 2,
    });
    expect(terminal.reason).toBe("model_error");
    expect(terminal.error?.message).toMatch(/no event \(pings aside\) for 150 ms/);
    expect(faults()).toEqual(["ping_only", "ping_only", "ping_only"]);
    expect(retries(events)).toHaveLength(2);
  });

  it("a slow but steady stream is not cut: the idle deadline restarts at every event", async () => {
    // About 100 events 40 ms apart: the stream lasts longer than the deadline, each gap is shorter.
    const handle = await sims.start([{ content: [{ type: "text", text: "word ".repeat(200) }] }], {
      faults: parseFaultSpec("slow@1:slow_ms=40"),
    });
    const { events, terminal } = await collect(
      query(simParams(handle, { retry: { ...FAST_RETRY, streamIdleTimeoutMs: 800 } })),
    );
    expect(terminal.reason).toBe("completed");
    expect(retries(events)).toHaveLength(0);
  });
});

describe("R-R1: which failures are retried", () => {
  const socketError = (code: string) => Object.assign(new Error("other side closed"), { code });
  it.each([
    [
      "undici's terminated with a socket cause",
      true,
      new TypeError("terminated", { cause: socketError("UND_ERR_SOCKET") }),
    ],
    ["ECONNRESET", true, Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })],
    ["socket hang up", true, new Error("socket hang up")],
    ["bad JSON in an event", true, new SyntaxError("Unexpected token n in JSON")],
    ["a bug in our code", false, new TypeError("cannot read properties of undefined")],
  ])("%s: retried = %s", (_name, retryable, error) => {
    expect(classifyError(error).retryable).toBe(retryable);
  });

  it("a cause chain is followed, a plain TypeError is not a broken connection", () => {
    expect(isInterruptedConnection(new TypeError("fetch failed", { cause: socketError("ECONNRESET") }))).toBe(
      true,
    );
    expect(isInterruptedConnection(new TypeError("x is not a function"))).toBe(false);
  });
});

describe("R-R1: the SDK's errors are told by their shape, whichever copy of the SDK made them", () => {
  // The SDK's CommonJS build: the same classes as another copy has them (a caller's own client,
  // another version installed beside forkloop's), not the classes forkloop loads.
  const other = createRequire(import.meta.url)("@anthropic-ai/sdk") as typeof import("@anthropic-ai/sdk");
  const OtherAnthropic = other.default;
  const typed = (type: string, message: string) => ({ type: "error", error: { type, message } });
  const cases = (Sdk: typeof Anthropic) => [
    Sdk.APIError.generate(
      429,
      typed("rate_limit_error", "slow down"),
      undefined,
      new Headers({ "retry-after": "7" }),
    ),
    Sdk.APIError.generate(
      529,
      typed("overloaded_error", "busy"),
      undefined,
      new Headers({ "request-id": "req_1" }),
    ),
    Sdk.APIError.generate(400, typed("invalid_request_error", "bad"), undefined, new Headers()),
    Sdk.APIError.generate(404, undefined, "<html><title>Not here</title></html>", new Headers()),
    new Sdk.APIConnectionError({ message: "Connection error.", cause: new Error("ECONNREFUSED") }),
    new Sdk.APIConnectionTimeoutError(),
    new Sdk.APIUserAbortError(),
  ];

  it("every kind of API error from another copy classifies as forkloop's own copy's does", () => {
    // Control: the copies' classes differ (an instanceof check would miss the other's errors).
    expect(OtherAnthropic.APIError).not.toBe(Anthropic.APIError);
    expect(cases(OtherAnthropic)[0]).not.toBeInstanceOf(Anthropic.APIError);
    const own = cases(Anthropic).map(classifyError);
    expect(cases(OtherAnthropic).map(classifyError)).toEqual(own);
    expect(own.map((failure) => [failure.type, failure.retryable])).toEqual([
      ["rate_limit_error", true],
      ["overloaded_error", true],
      ["invalid_request_error", false],
      ["wrong_endpoint", false],
      ["connection_error", true],
      ["connection_error", true],
      ["api_error", true],
    ]);
    expect(own[0]?.retryAfterMs).toBe(7_000);
  });

  it("a query given a client from another copy retries its 429 and completes", async () => {
    const handle = await sims.start([{ content: [{ type: "text", text: "recovered" }] }], {
      faults: parseFaultSpec("429@1:retry_after=0"),
    });
    const client = new OtherAnthropic({ apiKey: "test-key", baseURL: handle.sim.url, maxRetries: 0 });
    const { events, terminal } = await collect(
      query(simParams(handle, { client: client as unknown as InstanceType<typeof Anthropic> })),
    );
    expect(handle.messageRequests().map((record) => record.fault)).toEqual(["429", null]);
    expect(retries(events)).toHaveLength(1);
    expect(terminal.reason).toBe("completed");
  });
});
