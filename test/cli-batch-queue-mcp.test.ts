import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectQueue, parseQueueUrl } from "@forkloop/batch";
import {
  batchStateDir,
  type CliOptions,
  type RedisServer,
  type SimProcess,
  type StartedCli,
  startCli,
  startRedisServer,
  startSimProcess,
  startTracked,
  stopStarted,
  waitForOutput,
  writeScenario,
} from "@forkloop/cli/testing";
import {
  filesystemServerConfig,
  realServerScript,
  TEST_SERVER_PATH,
  testServerConfig,
} from "@forkloop/mcp/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { toolCall as call, filesystemReadText, resultText, toolResults } from "./support/sim-tool-results.js";

/**
 * R-M1, R-B1: a queued batch's items use MCP servers that each `forkloop worker` starts from its
 * own configuration. Everything is real and spawned: redis-server on a free port, the built CLI
 * as producer and worker, the simulator (scripted to call the `mcp__…` tools), the repo's MCP test
 * server and `@modelcontextprotocol/server-filesystem` over stdio.
 */

const SECRET = "s3cret-token-in-the-server-env";

let redis: RedisServer;
let sim: SimProcess;
let dir: string;
const workers: ReturnType<typeof startCli>[] = [];

/**
 * The producers and one-shot commands this file spawns, stopped after each test as the workers
 * are: one left waiting on the queue by a test that timed out ran on for an hour.
 */
const producers: StartedCli[] = [];
const startProducer = (args: readonly string[], options: CliOptions) =>
  startTracked(producers, args, options);
const runProducer = (args: readonly string[], options: CliOptions) => startProducer(args, options).exited;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-queue-mcp-"));
  redis = await startRedisServer();
  await writeFile(join(dir, "notes.txt"), "notes on the worker host\n");
  await writeFile(
    join(dir, "servers.json"),
    JSON.stringify({
      mcpServers: {
        test: { ...testServerConfig(), env: { MCP_SECRET: SECRET } },
        files: filesystemServerConfig(dir),
      },
    }),
  );
  const scenario = await writeScenario(
    join(dir, "scenario.json"),
    [
      ...["a", "b"].map((id) => ({
        match: { querySource: "batch", turn: 0, lastUserText: `item ${id}` },
        reply: {
          content: [
            call(`toolu_pid_${id}`, "mcp__test__pid"),
            call(`toolu_read_${id}`, "mcp__files__read_text_file", { path: join(dir, "notes.txt") }),
            call(`toolu_write_${id}`, "mcp__files__write_file", {
              path: join(dir, `out-${id}.txt`),
              content: `written by item ${id}`,
            }),
          ],
        },
      })),
      {
        match: { querySource: "batch", turn: 1 },
        reply: { content: [{ type: "text", text: "Item done." }] },
      },
    ],
    "(unscripted)",
  );
  sim = await startSimProcess(dir, ["--scenario", scenario]);
}, 60_000);
afterAll(async () => {
  await sim?.stop();
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await stopStarted(workers);
  await stopStarted(producers);
});

function startWorker(extra: readonly string[]) {
  const worker = startCli(["worker", "--queue", redis.url, "--concurrency", "2", ...extra], {
    cwd: dir,
    env: sim.env,
  });
  workers.push(worker);
  return worker;
}

async function writeItems(file: string, ids: readonly string[]): Promise<void> {
  await writeFile(join(dir, file), ids.map((id) => JSON.stringify({ id })).join("\n"));
}

function queuedBatch(id: string, items: string, extra: readonly string[]) {
  const args = ["batch", "--items", items, "--prompt", "Handle item {{item.id}}", "--queue", redis.url];
  return runProducer([...args, "--id", id, ...extra], { cwd: dir });
}

async function readResults(batchId: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(join(batchStateDir(dir, batchId), "results.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Every value Redis holds (strings, hashes, lists, sets, sorted sets, streams), as one text. */
async function everythingInRedis(): Promise<string> {
  const client = await connectQueue(parseQueueUrl(redis.url));
  try {
    const values: string[] = [];
    for (const key of await client.keys("*")) {
      const type = await client.type(key);
      if (type === "string") values.push((await client.get(key)) ?? "");
      else if (type === "hash") values.push(JSON.stringify(await client.hgetall(key)));
      else if (type === "list") values.push(JSON.stringify(await client.lrange(key, 0, -1)));
      else if (type === "set") values.push(JSON.stringify(await client.smembers(key)));
      else if (type === "zset") values.push(JSON.stringify(await client.zrange(key, "0", "-1")));
      else if (type === "stream") values.push(JSON.stringify(await client.xrange(key, "-", "+")));
      else throw new Error(`key ${key} has a type this test does not read: ${type}`);
    }
    return values.join("\n");
  } finally {
    client.disconnect();
  }
}

async function storedSettings(batchId: string): Promise<Record<string, unknown>> {
  const client = await connectQueue(parseQueueUrl(redis.url));
  try {
    return JSON.parse((await client.get(`forkloop:batch:${batchId}:settings`)) ?? "null");
  } finally {
    client.disconnect();
  }
}

describe("R-B1, R-M1: MCP tools for queued batches (built CLI, real Redis, real MCP servers)", () => {
  it("R-B1, R-M1: the items call the MCP servers the worker starts from its own --mcp-config (one server process for every item, closed on SIGTERM); Redis holds the servers' names, no command line, path or env", async () => {
    await writeItems("items.jsonl", ["a", "b"]);
    const worker = startWorker(["--mcp-config", "servers.json"]);
    const run = await queuedBatch("mcp-q", "items.jsonl", [
      "--mcp-config",
      "servers.json",
      "--allowed-tools",
      "mcp__files__write_file",
    ]);
    expect(run.code, `${run.stderr}\nworker:\n${worker.stderr()}`).toBe(0);
    expect(run.stderr).toContain("MCP servers test, files (each worker starts its own");
    const results = await readResults("mcp-q");
    expect(results.map((line) => line.status)).toEqual(["succeeded", "succeeded"]);

    // The tools ran on the worker's servers: their side effects and their real results.
    for (const id of ["a", "b"]) {
      expect(await readFile(join(dir, `out-${id}.txt`), "utf8")).toBe(`written by item ${id}`);
    }
    const calls = toolResults((await sim.requests()).filter((record) => record.querySource === "batch"));
    for (const id of ["a", "b"]) {
      expect(resultText(calls.get(`toolu_read_${id}`))).toBe(
        filesystemReadText("notes on the worker host\n"),
      );
      expect(calls.get(`toolu_write_${id}`)?.is_error ?? false).toBe(false);
    }
    const pids = ["a", "b"].map((id) => resultText(calls.get(`toolu_pid_${id}`)));
    expect(pids[0]).toMatch(/^\d+$/);
    expect(pids[1]).toBe(pids[0]); // started once, shared by the items

    // What the producer stored: the names (and transports) only.
    const settings = await storedSettings("mcp-q");
    expect(settings.mcpServers).toEqual([
      { name: "test", transport: "stdio" },
      { name: "files", transport: "stdio" },
    ]);
    expect(settings.spec).not.toHaveProperty("mcpConfig");
    const stored = await everythingInRedis();
    expect(stored).toContain('"mcpServers"');
    for (const secret of [TEST_SERVER_PATH, realServerScript("server-filesystem"), SECRET, "servers.json"]) {
      expect(stored).not.toContain(secret);
    }

    worker.child.kill("SIGTERM");
    const stopped = await worker.exited;
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(existsSync(`/proc/${pids[0]}`)).toBe(false); // the worker closed its MCP server
  }, 30_000);

  it("R-B1, R-M1: a worker without the batch's MCP server fails its items for good, naming the server, the worker and the fix (logged once, shown by the producer), runs none of them, and goes on", async () => {
    await writeItems("more.jsonl", ["x", "y", "z"]);
    const worker = startWorker(["--strict-mcp-config"]);
    await waitForOutput(worker.child, worker.stderr, (text) => text.includes("running items from"));
    const run = await queuedBatch("mcp-missing", "more.jsonl", ["--mcp-config", "servers.json"]);
    expect(run.code, run.stderr).toBe(7); // every item failed
    const results = await readResults("mcp-missing");
    expect(results.map((line) => line.status)).toEqual(["failed", "failed", "failed"]);
    for (const line of results) {
      const error = line.error as { code: string; message: string };
      expect(error.code).toBe("mcp_server_unavailable");
      expect(error.message).toMatch(
        /^batch mcp-missing uses MCP servers that forkloop worker \S+:\d+ cannot start: "test" \(stdio\) is not in its configuration; "files" \(stdio\) is not in its configuration \(it has: none\)\. Fix: .*--mcp-config FILE/,
      );
    }
    // Failed for good: one execution each, no BullMQ retries.
    expect(results.map((line) => line.attempts)).toEqual([1, 1, 1]);
    expect(run.stderr).toMatch(/FAILED .*mcp_server_unavailable: batch mcp-missing uses MCP servers/);
    expect(worker.stderr().match(/batch mcp-missing: not served here/g)).toHaveLength(1);
    const sent = (await sim.requests()).filter((record) => /item [xyz]/.test(record.rawBody));
    expect(sent).toHaveLength(0);

    // Still serving: a batch without MCP servers runs on the same worker.
    await writeItems("plain.jsonl", ["p"]);
    const plain = await queuedBatch("plain", "plain.jsonl", ["--strict-mcp-config"]);
    expect(plain.code, plain.stderr).toBe(0);
    worker.child.kill("SIGTERM");
    expect((await worker.exited).code).toBe(0);
  }, 30_000);
});
