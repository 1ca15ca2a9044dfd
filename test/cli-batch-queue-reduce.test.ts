import { existsSync } from "node:fs";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectQueue, parseQueueUrl } from "@forkloop/batch";
import {
  batchStateDir,
  type RedisServer,
  runCliInProcess,
  startCli,
  startCliInProcess,
  startRedisServer,
} from "@forkloop/cli/testing";
import { testServerConfig } from "@forkloop/mcp/testing";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-B7, R-B1: `forkloop batch --queue URL --reduce PROMPT` through the CLI, a real redis-server, a
 * `forkloop worker` in this process and the simulator over HTTP. The workers run the map; the
 * producer, once every item is settled, runs the reduce itself — a fork on the map's prefix, so it
 * reads what the items wrote to the cache — journaled in its batch directory and in Redis: a
 * producer kill -9'd during the reduce (the simulator holds the request) is re-attached into the
 * reduce alone, run once more; a finished one is kept by a re-attach on any host.
 */
const REDUCE_MARK = "The batch's items have finished";
const PID_PROMPT = "Sum up the findings and name the pid the test tool gives.";

let dir: string;
let server: Simulator;
let redis: RedisServer;
let holdReduce = false;
/** While set, the simulator answers a reduce request only once it resolves. */
let reduceGate: Promise<void> | undefined;
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "forkloop-queue-reduce-")));
  await writeFile(join(dir, "items.jsonl"), '{"n":1}\n{"n":2}\n{"n":3}\n');
  await writeFile(join(dir, "servers.json"), JSON.stringify({ mcpServers: { test: testServerConfig() } }));
  redis = await startRedisServer();
  const answer = (text: string) => ({ content: [{ type: "text" as const, text }] });
  server = await startSimulator({
    brain: async (request) => {
      const text = JSON.stringify(request.body.messages ?? []);
      if (!text.includes(REDUCE_MARK)) return answer(`finding ${/\(item (\d)\)/.exec(text)?.[1] ?? "?"}`);
      if (holdReduce) return { content: [], fault: "headers_then_silence" };
      await reduceGate;
      if (text.includes(PID_PROMPT)) {
        // The MCP reduce: it calls the server's pid tool, then answers with what it returned.
        const [result] = request.lastToolResults;
        if (result === undefined)
          return {
            content: [
              { type: "tool_use" as const, id: "toolu_reduce_pid", name: "mcp__test__pid", input: {} },
            ],
          };
        return answer(`REDUCED with pid ${result.is_error ? `error ${result.content}` : result.content}`);
      }
      return answer("REDUCED: three findings");
    },
  });
});
afterAll(async () => {
  await server?.close();
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

// A short claim on the reduce: a producer kill -9'd during it holds the next one back only 3 s.
const env = () => ({
  ANTHROPIC_API_KEY: "test-key",
  ANTHROPIC_BASE_URL: server.url,
  FORKLOOP_QUEUE_REDUCE_LEASE_MS: "3000",
});
const worker = (...extra: string[]) =>
  startCliInProcess(["worker", "--queue", redis.url, "--concurrency", "3", "--sandbox", "off", ...extra], {
    cwd: dir,
    env: env(),
  });
const newBatch = (id: string) => [
  "batch",
  "--items",
  "items.jsonl",
  "--prompt",
  "Look at (item {{item.n}}).",
  "--reduce",
  "Sum up the findings.",
  "--queue",
  redis.url,
  "--sandbox",
  "off",
  "--id",
  id,
];
const reattach = (id: string, ...extra: string[]) =>
  runCliInProcess(["batch", "--resume", id, "--queue", redis.url, "--sandbox", "off", ...extra], {
    cwd: dir,
    env: env(),
  });

type Body = { model: string; tools: unknown; system: unknown; messages: unknown[] };
const bodyOf = (record: { rawBody: string }) => JSON.parse(record.rawBody) as Body;
const messages = () => server.requests().filter((record) => record.path === "/v1/messages");
const isReduce = (record: { rawBody: string }) =>
  JSON.stringify(bodyOf(record).messages).includes(REDUCE_MARK);
const prefixOf = (record: { rawBody: string }) => {
  const body = bodyOf(record);
  return JSON.stringify([body.model, body.tools, body.system]);
};
const readJson = async (path: string) => JSON.parse(await readFile(path, "utf8"));

async function redisGet(key: string): Promise<string | null> {
  const admin = await connectQueue(parseQueueUrl(redis.url));
  try {
    return await admin.get(key);
  } finally {
    admin.disconnect();
  }
}
const redisReduce = async (id: string): Promise<Record<string, unknown>> =>
  JSON.parse((await redisGet(`forkloop:batch:${id}:reduce`)) ?? "null");

async function waitUntil(test: () => boolean, what: string): Promise<void> {
  for (let tries = 0; tries < 1200; tries++) {
    if (test()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("R-B7: forkloop batch --queue URL --reduce", { timeout: 180_000 }, () => {
  it("R-B7, R-B1: the producer runs the reduce once after every worker's item settled, reading the map's prefix from the cache; its answer is the result; a re-attach on this or another host keeps it", async () => {
    const running = worker();
    try {
      const before = messages().length;
      const result = await runCliInProcess(newBatch("qr"), { cwd: dir, env: env() });
      expect(result.code, `${result.stderr}\nworker:\n${running.stderr()}`).toBe(0);
      const sent = messages().slice(before);
      const items = sent.filter((record) => !isReduce(record));
      const reduces = sent.filter(isReduce);
      expect([items.length, reduces.length]).toEqual([3, 1]);
      const reduce = reduces[0]!;
      expect(reduce.startedAt).toBeGreaterThanOrEqual(
        Math.max(...items.map((record) => record.endedAt ?? 0)),
      );
      const asked = JSON.stringify(bodyOf(reduce).messages);
      for (const text of ["finding 1", "finding 2", "finding 3", "Sum up the findings."])
        expect(asked).toContain(text);
      // A fork of the map the workers ran: the same model, tools and system prompt, read from the cache.
      expect(new Set(sent.map(prefixOf)).size).toBe(1);
      expect(reduce.usage?.cache_read_input_tokens ?? 0).toBeGreaterThan(0);

      expect(result.stdout).toMatch(/^result \(reduce over 3 items, \$[\d.]+\):\nREDUCED: three findings/);
      const state = batchStateDir(dir, "qr");
      expect(await readJson(join(state, "reduce.json"))).toMatchObject({
        status: "succeeded",
        attempt: 1,
        items: 3,
      });
      expect(await redisReduce("qr")).toMatchObject({ status: "succeeded", attempt: 1 });
      const report = await readJson(join(state, "report.json"));
      expect(report.reduce).toMatchObject({ status: "succeeded", text: "REDUCED: three findings" });
      // Its transcript is on this host (the producer's), named as a local batch's is.
      expect(report.reduce.transcript).toBe(join(state, "transcripts", "reduce-1.fltr"));
      expect(existsSync(report.reduce.transcript)).toBe(true);
      const itemsCost = report.items.reduce(
        (sum: number, line: { costUsd: number }) => sum + line.costUsd,
        0,
      );
      expect(report.totals.costUsd).toBeCloseTo(itemsCost + report.reduce.costUsd, 10);

      // Re-attached here, and from another host (another state directory): kept, nothing sent.
      const count = messages().length;
      const again = await reattach("qr");
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain("REDUCED: three findings");
      const elsewhere = join(dir, "other-host-state");
      const other = await reattach("qr", "--state-dir", elsewhere);
      expect(other.code, other.stderr).toBe(0);
      expect(other.stdout).toContain("REDUCED: three findings");
      expect(other.stderr).toContain("reduce: its answer over these results is kept from an earlier run");
      expect(messages().length).toBe(count);
      // The reduce was enqueued with the batch: a re-attach given another is refused naming the fix.
      const refused = await reattach("qr", "--reduce", "List them.");
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        "--resume continues batch qr with the settings it started with; drop --reduce.",
      );
    } finally {
      await running.stop();
    }
  });

  it("R-B7: a producer kill -9'd during its reduce — the re-attach runs the reduce alone, once; every item keeps its one attempt", async () => {
    const running = worker();
    holdReduce = true;
    try {
      const before = messages().length;
      const producer = startCli(newBatch("qk"), { cwd: dir, env: env() });
      await waitUntil(() => messages().slice(before).some(isReduce), "the reduce request");
      producer.child.kill("SIGKILL");
      expect((await producer.exited).signal).toBe("SIGKILL");
      // Its claim on the reduce outlives it until the lease expires; then the re-attach takes it.
      expect(await redisGet("forkloop:batch:qk:reduce-lease")).not.toBeNull();
      const state = batchStateDir(dir, "qk");
      expect(await readJson(join(state, "reduce.json"))).toMatchObject({ status: "running", attempt: 1 });
      expect(await redisReduce("qk")).toMatchObject({ status: "running", attempt: 1 });

      holdReduce = false;
      const count = messages().length;
      const resumed = await reattach("qk");
      expect(resumed.code, `${resumed.stderr}\nworker:\n${running.stderr()}`).toBe(0);
      const sent = messages().slice(count);
      expect(sent.map(isReduce)).toEqual([true]);
      expect(resumed.stdout).toContain("REDUCED: three findings");
      expect(await readJson(join(state, "reduce.json"))).toMatchObject({ status: "succeeded", attempt: 2 });
      const rows = (await readFile(join(state, "results.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(rows.map((row) => [row.status, row.attempts])).toEqual([
        ["succeeded", 1],
        ["succeeded", 1],
        ["succeeded", 1],
      ]);
      // Once: the next re-attach keeps it.
      const again = await reattach("qk");
      expect(again.code, again.stderr).toBe(0);
      expect(messages().length).toBe(count + 1);
    } finally {
      holdReduce = false;
      await running.stop();
    }
  });

  it("R-B7, R-B1: a producer whose claim on the reduce is lost while it runs (the lease gone, as after a stall past it) stops the reduce — interrupted, nothing kept as its answer — and `batch status` meanwhile says the reduce is running; the re-attach runs it once", async () => {
    const running = worker();
    let release = () => {};
    reduceGate = new Promise((resolve) => {
      release = resolve;
    });
    try {
      const count = messages().length;
      const producer = startCliInProcess(newBatch("ql"), { cwd: dir, env: env() });
      await waitUntil(() => messages().slice(count).some(isReduce), "the reduce request");
      const state = batchStateDir(dir, "ql");
      const status = await runCliInProcess(["batch", "status", "ql"], { cwd: dir, env: env() });
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain("its reduce is running, or its producer stopped during it");
      expect(status.stdout).toContain("reduce: running over 3 items");
      // Another producer could take the claim now: this one must not answer beside it.
      const admin = await connectQueue(parseQueueUrl(redis.url));
      try {
        expect(await admin.del("forkloop:batch:ql:reduce-lease")).toBe(1);
      } finally {
        admin.disconnect();
      }
      const stopped = await producer.exited;
      expect(stopped.code, producer.stderr()).toBe(130);
      expect(producer.stderr()).toContain("this producer's claim on it expired");
      expect(producer.stderr()).toContain("interrupted during the reduce");
      expect(await readJson(join(state, "reduce.json"))).toMatchObject({ status: "running", attempt: 1 });
      expect(await redisReduce("ql")).toMatchObject({ status: "running", attempt: 1 });
      release();
      reduceGate = undefined;

      const before = messages().length;
      const resumed = await reattach("ql");
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(messages().slice(before).map(isReduce)).toEqual([true]);
      expect(await readJson(join(state, "reduce.json"))).toMatchObject({ status: "succeeded", attempt: 2 });
      const after = await runCliInProcess(["batch", "status", "ql"], { cwd: dir, env: env() });
      expect(after.stdout).toContain("reduce: succeeded over 3 items");
      expect(after.stdout).not.toContain("its reduce is running");
    } finally {
      release();
      reduceGate = undefined;
      await running.stop();
    }
  });

  it("R-B7, R-B1: two producers re-attached at the same moment — one claims the reduce (SET NX PX), the other waits for its outcome; the simulator answers one reduce request", async () => {
    const running = worker();
    let release = () => {};
    try {
      // The items settle; this producer's host cannot run the reduce, so none has run.
      const first = await runCliInProcess(newBatch("qc"), {
        cwd: dir,
        env: { ...env(), ANTHROPIC_BASE_URL: "not-a-url" },
      });
      expect(first.code, `${first.stderr}\nworker:\n${running.stderr()}`).toBe(6);
      reduceGate = new Promise((resolve) => {
        release = resolve;
      });
      const count = messages().length;
      const producers = [
        startCliInProcess(["batch", "--resume", "qc", "--queue", redis.url, "--sandbox", "off"], {
          cwd: dir,
          env: env(),
        }),
        startCliInProcess(
          [
            "batch",
            "--resume",
            "qc",
            "--queue",
            redis.url,
            "--sandbox",
            "off",
            "--state-dir",
            join(dir, "second-host-state"),
          ],
          { cwd: dir, env: env() },
        ),
      ];
      // One holds the reduce (its request held by the simulator); the other waits on its claim —
      // without the claim it would have sent a second request by now.
      await waitUntil(
        () =>
          messages().slice(count).filter(isReduce).length >= 2 ||
          (messages().slice(count).some(isReduce) &&
            producers.some((producer) => producer.stderr().includes("waiting for its outcome"))),
        "a reduce request and a waiting producer",
      );
      release();
      const results = await Promise.all(producers.map((producer) => producer.exited));
      for (const [index, result] of results.entries())
        expect(result.code, producers[index]!.stderr()).toBe(0);
      expect(messages().slice(count).map(isReduce)).toEqual([true]);
      for (const producer of producers) expect(producer.stdout()).toContain("REDUCED: three findings");
      expect(await redisReduce("qc")).toMatchObject({ status: "succeeded", attempt: 1 });
      expect(await redisGet("forkloop:batch:qc:reduce-lease")).toBeNull();
    } finally {
      release();
      reduceGate = undefined;
      await running.stop();
    }
  });

  it("R-B7, R-M1: the producer's reduce calls the MCP servers the batch names, started from this host's configuration as a worker does, and stopped after it", async () => {
    const servers = join(dir, "servers.json");
    const running = worker("--mcp-config", servers);
    try {
      const before = messages().length;
      const args = newBatch("qm");
      args[args.indexOf("Sum up the findings.")] = PID_PROMPT;
      const result = await runCliInProcess([...args, "--mcp-config", servers], { cwd: dir, env: env() });
      expect(result.code, `${result.stderr}\nworker:\n${running.stderr()}`).toBe(0);
      const sent = messages().slice(before);
      expect(sent.filter(isReduce)).toHaveLength(2);
      // Its tool list is the items' (mcp__test__pid among them): one prefix, read from the cache.
      expect(new Set(sent.map(prefixOf)).size).toBe(1);
      expect(JSON.stringify(bodyOf(sent[0]!).tools)).toContain("mcp__test__pid");
      const pid = /REDUCED with pid (\d+)\n/.exec(result.stdout)?.[1];
      expect(pid, result.stdout).toBeDefined();
      // The producer's own server process (not the worker's), ended with the reduce.
      expect(Number(pid)).not.toBe(process.pid);
      await waitUntil(() => {
        try {
          process.kill(Number(pid), 0);
          return false;
        } catch {
          return true;
        }
      }, "the reduce's MCP server to end");
    } finally {
      await running.stop();
    }
  });

  it("R-B7: a producer host without an API key does not run the reduce on the embedded simulator — the items' report is written, exit 6 naming the fix; the re-attach with a key runs it", async () => {
    const running = worker();
    try {
      const keyless = await runCliInProcess(newBatch("qs"), { cwd: dir, env: {} });
      expect(keyless.code, `${keyless.stderr}\nworker:\n${running.stderr()}`).toBe(6);
      expect(keyless.stderr).toContain("this host has no API key");
      expect(keyless.stderr).toContain("set the key on this host");
      expect(await redisReduce("qs")).toBeNull();
      const count = messages().length;
      const fixed = await reattach("qs");
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(messages().slice(count).map(isReduce)).toEqual([true]);
    } finally {
      await running.stop();
    }
  });

  it("R-B7: a producer whose host cannot run the reduce (its endpoint is misconfigured) still writes the items' report, exits partial naming the fix; the re-attach from a host that can runs the reduce alone", async () => {
    const running = worker();
    try {
      const broken = await runCliInProcess(newBatch("qe"), {
        cwd: dir,
        env: { ...env(), ANTHROPIC_BASE_URL: "not-a-url" },
      });
      expect(broken.code, `${broken.stderr}\nworker:\n${running.stderr()}`).toBe(6);
      expect(broken.stderr).toContain("the reduce did not start here");
      expect(broken.stderr).toContain(`forkloop batch --resume qe --queue ${redis.url}`);
      const state = batchStateDir(dir, "qe");
      const rows = (await readFile(join(state, "results.jsonl"), "utf8")).trim().split("\n");
      expect(rows.map((line) => JSON.parse(line).status)).toEqual(["succeeded", "succeeded", "succeeded"]);
      const count = messages().length;
      const fixed = await reattach("qe");
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(messages().slice(count).map(isReduce)).toEqual([true]);
      expect(fixed.stdout).toContain("REDUCED: three findings");
    } finally {
      await running.stop();
    }
  });
});
