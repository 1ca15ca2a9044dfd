import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  CLI_PATH,
  cliEnv,
  type RedisServer,
  runCli,
  startCli,
  startRedisServer,
  waitForOutput,
  withSim,
  writeScenario,
  writeTaskItems,
} from "@forkloop/cli/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ReceivedSpan, startOtlpReceiver } from "./support/otlp-receiver.js";

/**
 * R-V5: OpenTelemetry over OTLP, end to end: the built `forkloop` binary, spawned with the
 * variables Claude Code uses (CLAUDE_CODE_ENABLE_TELEMETRY=1, OTEL_*), exports to a real
 * OTLP/HTTP receiver started here; a queued batch runs on a real redis-server with a producer
 * and a worker process. Parent links are checked across a worker thread (a fork) and across
 * processes (the producer's batch span, carried in the job data to the worker's items).
 */
const OTLP_CLIENT_KIND = 3; // OTLP's SPAN_KIND_CLIENT

let dir: string;
let redis: RedisServer | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-otlp-"));
  await mkdir(join(dir, "src"));
  for (const name of ["alpha", "beta"]) {
    await writeFile(join(dir, "src", `${name}.ts`), `// The ${name} module.\nexport const ${name} = 1;\n`);
  }
});
afterAll(async () => {
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

const receivers: Awaited<ReturnType<typeof startOtlpReceiver>>[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()));
});
async function receiver() {
  const started = await startOtlpReceiver();
  receivers.push(started);
  return started;
}

function tree(spans: readonly ReceivedSpan[]) {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  return {
    parentOf: (span: ReceivedSpan) => byId.get(span.parentSpanId),
    named: (name: string) => spans.filter((span) => span.name === name),
    childrenOf: (span: ReceivedSpan) => spans.filter((child) => child.parentSpanId === span.spanId),
  };
}

describe("R-V5: OpenTelemetry export over OTLP", () => {
  it("R-V5: a `forkloop run` that forks sub-agents into worker threads exports one trace — session, turn, model requests with usage and cache figures, tool calls, forks — and its metrics", async () => {
    const otlp = await receiver();
    const result = await runCli(["run", "Summarize src/*.ts", "--output-format", "json"], {
      cwd: dir,
      env: otlp.env({ OTEL_METRIC_EXPORT_INTERVAL: "100" }),
    });
    expect(result.code, result.stderr).toBe(0);
    const spans = otlp.spans;
    const { parentOf, named, childrenOf } = tree(spans);
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);

    const [session] = named("forkloop.session");
    expect(session?.parentSpanId).toBe("");
    const [main] = named("invoke_agent main");
    expect(parentOf(main!)).toBe(session);
    expect(main?.attributes["gen_ai.operation.name"]).toBe("invoke_agent");
    expect(main?.attributes["gen_ai.conversation.id"]).toBe(session?.attributes["gen_ai.conversation.id"]);

    // The parent's requests: chat spans, CLIENT kind, usage and cache figures on each.
    const parentChats = childrenOf(main!).filter((span) => span.name.startsWith("chat "));
    expect(parentChats).toHaveLength(3); // Glob, the fan-out, the summary
    for (const chat of parentChats) {
      expect(chat.kind).toBe(OTLP_CLIENT_KIND);
      expect(chat.attributes["gen_ai.request.model"]).toBeTypeOf("string");
      expect(chat.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
      expect(chat.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
      expect(chat.attributes).toHaveProperty("gen_ai.usage.cache_read.input_tokens");
      expect(chat.attributes).toHaveProperty("gen_ai.usage.cache_creation.input_tokens");
    }
    expect(childrenOf(main!).map((span) => span.name)).toContain("execute_tool Glob");

    // Each Agent call → its fork (parent side) → the sub-agent's turn in a worker thread.
    const agentCalls = named("execute_tool Agent");
    expect(agentCalls).toHaveLength(2);
    const firstReads: number[] = [];
    for (const call of agentCalls) {
      expect(parentOf(call)).toBe(main);
      const [fork] = childrenOf(call);
      expect(fork?.name).toBe("fork agent:general-purpose");
      expect(fork?.attributes["thread.id"]).toBeGreaterThan(0);
      const [sub] = childrenOf(fork!);
      expect(sub?.name).toBe("invoke_agent general-purpose");
      const subChats = childrenOf(sub!).filter((span) => span.name.startsWith("chat "));
      expect(subChats.length).toBeGreaterThanOrEqual(2);
      // general-purpose is a conversation of its own (R-K3): its later request reads its own prefix.
      firstReads.push(Number(subChats[0]?.attributes["gen_ai.usage.cache_read.input_tokens"] ?? 0));
      expect(subChats.at(-1)?.attributes["gen_ai.usage.cache_read.input_tokens"]).toBeGreaterThan(0);
      expect(childrenOf(sub!).map((span) => span.name)).toContain("execute_tool Read");
    }
    // The type's prefix is warmed once for the fan-out: one writes it, the other reads it (R-F4).
    expect(firstReads.sort((x, y) => x - y)[0]).toBe(0);
    expect(firstReads[1]).toBeGreaterThan(0);

    const sum = (metric: string, where: Record<string, unknown> = {}) =>
      otlp.points
        .filter((point) => point.metric === metric)
        .filter((point) => Object.entries(where).every(([key, value]) => point.attributes[key] === value))
        .reduce((max, point) => Math.max(max, point.value), 0);
    expect(
      sum("forkloop.token.usage", { type: "cacheRead", "forkloop.agent": "general-purpose" }),
    ).toBeGreaterThan(0);
    expect(sum("forkloop.token.usage", { type: "output", "forkloop.agent": "main" })).toBeGreaterThan(0);
    expect(sum("forkloop.cost.usage", { "forkloop.agent": "main" })).toBeGreaterThan(0);
    expect(sum("gen_ai.client.token.usage", { "gen_ai.token.type": "input" })).toBeGreaterThan(0);
    expect(otlp.points.some((point) => point.metric === "forkloop.cache.read_share")).toBe(true);
    // Pool occupancy, observed at each collection (every 100 ms here): a thread was started.
    expect(sum("forkloop.pool.threads")).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it("R-V5: a sub-agent's own Agent call (run in the parent for the worker) starts a fork that hangs from that call's span in the worker thread", async () => {
    const project = join(dir, "nested");
    await mkdir(join(project, ".forkloop", "agents"), { recursive: true });
    for (const name of ["outer", "inner"]) {
      await writeFile(
        join(project, ".forkloop", "agents", `${name}.md`),
        `---\nname: ${name}\ndescription: The ${name} agent.\n---\nDo what you are asked.\n`,
      );
    }
    const call = (type: string) => ({
      content: [
        {
          type: "tool_use",
          name: "Agent",
          input: { description: `Ask ${type}`, prompt: "Go on.", subagent_type: type },
        },
      ],
    });
    const scenario = await writeScenario(
      join(project, "nested.json"),
      [
        {
          match: { querySource: "sdk", lastToolResult: "[Subagent hand-back]" },
          reply: { content: [{ type: "text", text: "All done." }] },
        },
        { match: { querySource: "sdk" }, reply: call("outer") },
        {
          match: { querySource: "agent:outer", lastToolResult: "[Subagent hand-back]" },
          reply: { content: [{ type: "text", text: "Outer done." }] },
        },
        { match: { querySource: "agent:outer" }, reply: call("inner") },
        {
          match: { querySource: "agent:inner" },
          reply: { content: [{ type: "text", text: "Inner done." }] },
        },
      ],
      "(unscripted)",
    );
    const otlp = await receiver();
    await withSim(project, ["--scenario", scenario, "--latency", "none"], async (sim) => {
      const result = await runCli(["run", "Delegate."], { cwd: project, env: { ...sim.env, ...otlp.env() } });
      expect(result.code, result.stderr).toBe(0);
    });
    const { parentOf, named } = tree(otlp.spans);
    expect(new Set(otlp.spans.map((span) => span.traceId)).size).toBe(1);
    const [innerFork] = named("fork agent:inner");
    const call_ = parentOf(innerFork!);
    expect(call_?.name).toBe("execute_tool Agent");
    // That call is the outer sub-agent's (recorded in its worker thread), under its fork.
    expect(parentOf(call_!)?.name).toBe("invoke_agent outer");
    expect(parentOf(parentOf(call_!)!)?.name).toBe("fork agent:outer");
    expect(parentOf(named("invoke_agent inner")[0]!)).toBe(innerFork);
  }, 120_000);

  it("R-V5: a queued batch's trace crosses processes — each item span on the worker host is the child of the producer's batch span (the trace context rides in the job data), with the fork and the item's turn below it; item statuses are counted", async () => {
    redis = await startRedisServer();
    await writeTaskItems(dir, 3);
    const otlp = await receiver();
    const env = otlp.env({ OTEL_METRIC_EXPORT_INTERVAL: "200" });
    const producer = startCli(
      ["batch", "--items", "items.jsonl", "--prompt", "Answer {{item}}", "--queue", redis.url, "--id", "otq"],
      { cwd: dir, env },
    );
    await waitForOutput(producer.child, producer.stderr, (text) =>
      text.includes("forkloop batch otq: 3 items"),
    );
    const worker = startCli(["worker", "--queue", redis.url, "--concurrency", "3"], { cwd: dir, env });
    try {
      const done = await producer.exited;
      expect(done.code, done.stderr).toBe(0);
    } finally {
      worker.child.kill("SIGTERM");
      await worker.exited;
    }
    const spans = otlp.spans;
    const { parentOf, named, childrenOf } = tree(spans);
    const [batch] = named("batch otq");
    expect(batch?.parentSpanId).toBe("");
    const items = named("batch_item");
    expect(items).toHaveLength(3);
    for (const item of items) {
      expect(parentOf(item)).toBe(batch);
      // Another process: its own service instance.
      expect(item.resource["service.instance.id"]).not.toBe(batch?.resource["service.instance.id"]);
      expect(item.attributes["forkloop.batch.item.status"]).toBe("succeeded");
      const [fork] = childrenOf(item);
      expect(fork?.name).toBe("fork batch");
      const [turn] = childrenOf(fork!);
      expect(turn?.name).toBe("invoke_agent batch");
      expect(childrenOf(turn!).some((span) => span.name.startsWith("chat "))).toBe(true);
    }
    const succeeded = otlp.points.filter(
      (point) => point.metric === "forkloop.batch.items" && point.attributes.status === "succeeded",
    );
    expect(Math.max(...succeeded.map((point) => point.value))).toBe(3);
  }, 120_000);

  it("R-V5: a local `forkloop batch` hangs every item, its fork and its turn from the batch span", async () => {
    await writeTaskItems(dir, 2);
    const otlp = await receiver();
    const result = await runCli(
      ["batch", "--items", "items.jsonl", "--prompt", "Answer {{item}}", "--id", "otl"],
      {
        cwd: dir,
        env: otlp.env(),
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const { parentOf, named, childrenOf } = tree(otlp.spans);
    const [batch] = named("batch otl");
    const items = named("batch_item");
    expect(items).toHaveLength(2);
    for (const item of items) {
      expect(parentOf(item)).toBe(batch);
      expect(childrenOf(childrenOf(item)[0]!)[0]?.name).toBe("invoke_agent batch");
    }
  });

  it("R-V5: OTEL_* variables forkloop cannot follow are exit 2 naming the variable and the fix; without the switch they are not read", async () => {
    const bad = await runCli(["run", "hi"], {
      cwd: dir,
      env: {
        CLAUDE_CODE_ENABLE_TELEMETRY: "1",
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")).toEqual([
      expect.stringContaining(
        "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not a protocol forkloop exports with: use http/protobuf or http/json",
      ),
    ]);
    const off = await runCli(["run", "hi"], { cwd: dir, env: { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } });
    expect(off.code, off.stderr).toBe(0);
  });
});

const run = promisify(execFile);
const TRACE_HOOKS = `data:text/javascript,${encodeURIComponent(
  "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(r.url + '\\n'); return r; }",
)}`;
const REGISTER = `import { register } from "node:module"; register(${JSON.stringify(TRACE_HOOKS)});`;

/** The OpenTelemetry modules a `forkloop run` process loads (its module resolutions, traced). */
async function openTelemetryModules(env: Record<string, string>): Promise<string[]> {
  const { stderr } = await run(
    process.execPath,
    ["--import", `data:text/javascript,${encodeURIComponent(REGISTER)}`, CLI_PATH, "run", "hi"],
    { cwd: dir, env: cliEnv(env, dir) },
  );
  const loaded = stderr.split("\n").filter((line) => line.startsWith("file:"));
  return [
    ...new Set(
      loaded
        .map(
          (url) =>
            /\/node_modules\/@opentelemetry\/([^/]+)\//.exec(url)?.[1] ??
            // The exporter module in the build (dist/) or as its own chunk of the published bundle.
            (/\/(telemetry\/otlp-export\.js|bundle\/chunk-otlp-export-[\w-]+\.js)$/.test(url)
              ? "otlp-export"
              : ""),
        )
        .filter((name) => name !== ""),
    ),
  ].sort();
}

describe("R-V5: telemetry off costs nothing", () => {
  it("R-V5: a run with telemetry off (the default) loads no OpenTelemetry module — the @opentelemetry/api that @anthropic-ai/sdk imports is inside loop-core's bundled SDK chunk; the same run with it on loads the OpenTelemetry SDK and the exporter (control)", async () => {
    expect(await openTelemetryModules({})).toEqual([]);
    const otlp = await receiver();
    const on = await openTelemetryModules(otlp.env());
    expect(on).toEqual(
      expect.arrayContaining(["otlp-export", "sdk-metrics", "sdk-trace", "exporter-trace-otlp-http"]),
    );
  }, 120_000);
});
