/**
 * The simulator's own capacity on this machine, so later benchmarks can
 * show it is never their bottleneck. Each figure is measured side by side with a bare node:http
 * server that returns a fixed, precomputed reply to the same SDK client: the ratio is the
 * simulator's overhead (validation, tokenizer, prompt cache, brain, SSE framing).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { type BenchResult, compare, percentile, timeRuns } from "./harness.js";

const MODEL = "claude-haiku-4-5";
const SMALL = { model: MODEL, max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] };
const REPLY_TEXT = "ok";
const LONG_WORDS = 20_000;
const CONCURRENCY = 16;
const THROUGHPUT_MS = 2_000;

function client(url: string): Anthropic {
  return new Anthropic({ apiKey: "bench-key", baseURL: url, maxRetries: 0 });
}

/** The fastest possible "API": a constant JSON body or SSE stream, no parsing, no state. */
async function bareServer(json: string, sse: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      const stream = body.includes('"stream":true');
      res.writeHead(200, {
        "content-type": stream ? "text/event-stream" : "application/json",
        "request-id": "req_bare",
      });
      res.end(stream ? sse : json);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Requests completed per second by `CONCURRENCY` concurrent callers over a fixed time. */
async function requestsPerSecond(call: () => Promise<unknown>): Promise<number> {
  const deadline = performance.now() + THROUGHPUT_MS;
  const started = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        await call();
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

/** A Claude-Code-sized prompt: ~40 KB of tool definitions and a 3-block system, cached. */
function largeRequest(): Anthropic.MessageCreateParamsNonStreaming {
  const tools = Array.from({ length: 20 }, (_, i) => ({
    name: `Tool${i}`,
    description: `Tool number ${i}. ${"It does a useful thing with files and text. ".repeat(30)}`,
    input_schema: {
      type: "object" as const,
      properties: { path: { type: "string", description: "a path" }, limit: { type: "number" } },
    },
  }));
  return {
    model: MODEL,
    max_tokens: 100,
    tools,
    system: [
      { type: "text", text: "billing header" },
      { type: "text", text: "identity line", cache_control: { type: "ephemeral" } },
      { type: "text", text: "main prompt ".repeat(2000), cache_control: { type: "ephemeral" } },
    ],
    messages: [
      { role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] },
    ],
  };
}

export async function run(): Promise<BenchResult[]> {
  const longText = Array.from({ length: LONG_WORDS }, (_, i) => `w${i % 1000}`).join(" ");
  const sim: Simulator = await startSimulator({
    brain: (request) => ({
      content: [{ type: "text", text: request.lastUserText === "long" ? longText : REPLY_TEXT }],
    }),
  });
  const simClient = client(sim.url);
  // The bare server replays what the simulator answered, byte for byte.
  const json = JSON.stringify(await simClient.messages.create(SMALL));
  const sseResponse = await fetch(`${sim.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify({
      ...SMALL,
      max_tokens: 64_000,
      stream: true,
      messages: [{ role: "user", content: "long" }],
    }),
  });
  const sse = await sseResponse.text();
  const bare = await bareServer(json, sse);
  const bareClient = client(bare.url);
  const results: BenchResult[] = [];
  try {
    // Warm both paths up first (JIT, sockets), so the first measured side is not penalised.
    await requestsPerSecond(() => bareClient.messages.create(SMALL));
    await requestsPerSecond(() => simClient.messages.create(SMALL));
    const bareRps = await requestsPerSecond(() => bareClient.messages.create(SMALL));
    const simRps = await requestsPerSecond(() => simClient.messages.create(SMALL));
    results.push(
      compare(
        "sim: small requests/s (SDK, 16 concurrent; higher is better)",
        "throughput",
        "req/s",
        { label: "bare node:http", value: bareRps },
        { label: "simulator", value: simRps },
      ),
    );

    const bareLatency = await timeRuns(() => bareClient.messages.create(SMALL), 300, 20);
    const simLatency = await timeRuns(() => simClient.messages.create(SMALL), 300, 20);
    const large = largeRequest();
    const largeLatency = await timeRuns(() => simClient.messages.create(large), 100, 5);
    const p50 = (s: number[]) => percentile(s, 50);
    results.push(
      compare(
        "sim: p50 latency of a small request (lower is better)",
        "latency",
        "ms",
        { label: "bare node:http", value: p50(bareLatency) },
        { label: "simulator", value: p50(simLatency) },
      ),
      {
        name: "sim: added latency per small request (simulator p50 − bare p50)",
        metric: "latency",
        value: p50(simLatency) - p50(bareLatency),
        unit: "ms",
      },
      compare(
        "sim: p50 latency, 40 KB cached Claude-Code-sized prompt vs small (lower is better)",
        "latency",
        "ms",
        { label: "small request", value: p50(simLatency) },
        { label: "large cached prompt", value: p50(largeLatency) },
        `${JSON.stringify(large).length} bytes of request body`,
      ),
    );

    const streamTokens = async (c: Anthropic): Promise<{ tokens: number; ms: number }> => {
      const started = performance.now();
      const message = await c.messages
        .stream({ ...SMALL, max_tokens: 64_000, messages: [{ role: "user", content: "long" }] })
        .finalMessage();
      return { tokens: message.usage.output_tokens, ms: performance.now() - started };
    };
    const best = async (c: Anthropic) => {
      let rate = 0;
      for (let i = 0; i < 5; i++) {
        const { tokens, ms } = await streamTokens(c);
        rate = Math.max(rate, tokens / (ms / 1000));
      }
      return rate;
    };
    const bareStream = await best(bareClient);
    const simStream = await best(simClient);
    results.push(
      compare(
        "sim: streamed output tokens/s at zero latency (SDK MessageStream; higher is better)",
        "throughput",
        "tokens/s",
        { label: "bare node:http replay", value: bareStream },
        { label: "simulator", value: simStream },
        `${LONG_WORDS} words per reply`,
      ),
    );
  } finally {
    await sim.close();
    await new Promise<void>((resolve) => bare.server.close(() => resolve()));
    bare.server.closeAllConnections();
  }
  return results;
}
