import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  batchStateDir,
  canMakeHosts,
  type NetworkHosts,
  type RedisServer,
  type StartedCli,
  startNetworkHosts,
  startRedisServer,
  startTracked,
  stopStarted,
  waitForOutput,
  writeTaskItems,
} from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-B1, R-V3: a queued batch across hosts that reach each other only over a network — Linux
 * network namespaces cabled to one switch, made by the test (network-hosts.ts): Redis and the
 * producer on host `r`, one `forkloop worker` on each of `w1`…`w4` (each with its embedded
 * simulator, so the only traffic between hosts is the queue's). Host `w4` is unplugged mid-batch
 * — its cable and namespace deleted while its worker runs on, cut off — and the batch still ends
 * with every item exactly once. Needs root; where namespaces cannot be made the file says why.
 */

const WORKER_HOSTS = ["w1", "w2", "w3", "w4"] as const;
const ITEMS = 48;
const exec = promisify(execFile);
const possible = await canMakeHosts();
if (!possible.ok) console.warn(`cli-batch-queue-hosts: not run here: ${possible.reason}`);

let network: NetworkHosts;
let redis: RedisServer;
let dir: string;
const started: StartedCli[] = [];

beforeAll(async () => {
  if (!possible.ok) return;
  network = await startNetworkHosts({ hosts: ["r", ...WORKER_HOSTS] });
  redis = await startRedisServer({ launcher: network.launcher("r"), bind: network.address("r") });
  dir = await mkdtemp(join(tmpdir(), "forkloop-queue-hosts-"));
  await writeTaskItems(dir, ITEMS);
});
afterAll(async () => {
  await stopStarted(started);
  await redis?.stop();
  await network?.remove();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const okLines = (text: string) => (text.match(/^ok /gm) ?? []).length;

/** The addresses of the clients connected to Redis, read on Redis's own host. */
async function clientHosts(): Promise<Set<string>> {
  const [command, ...prefix] = [...network.launcher("r"), "redis-cli"];
  const { stdout } = await exec(command as string, [
    ...prefix,
    "-h",
    network.address("r"),
    "-p",
    String(redis.port),
    "CLIENT",
    "LIST",
  ]);
  return new Set([...stdout.matchAll(/ addr=([\d.]+):\d+ /g)].map((match) => match[1] as string));
}

describe.runIf(possible.ok)("forkloop batch --queue across network hosts (R-B1, R-V3)", () => {
  it("4 worker hosts, one unplugged mid-batch: every item has exactly one result, the lost host's items ran again on the others, exit 0", async () => {
    const workers = WORKER_HOSTS.map((host) =>
      startTracked(
        started,
        // Short locks, so the unplugged host's items come back within seconds (defaults: 30 s).
        [
          "worker",
          "--queue",
          redis.url,
          "--concurrency",
          "4",
          "--lock-duration",
          "2000",
          "--stalled-interval",
          "1000",
        ],
        // Paced replies (each SSE event 40 ms), so items are in flight when the host goes.
        { cwd: dir, launcher: network.launcher(host), env: { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=40" } },
      ),
    );
    const producer = startTracked(
      started,
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Answer {{item}}",
        "--queue",
        redis.url,
        "--id",
        "hosts",
      ],
      { cwd: dir, launcher: network.launcher("r") },
    );
    const lost = workers[3] as StartedCli;
    await waitForOutput(lost.child, lost.stderr, (text) => okLines(text) >= 2);
    // Every host is on the queue from its own address (none shares the machine's loopback).
    const hosts = await clientHosts();
    for (const host of ["r", ...WORKER_HOSTS])
      expect(hosts, `connected: ${[...hosts]}`).toContain(network.address(host));

    await network.unplug("w4");
    const recordedBefore = okLines(lost.stderr());
    const done = await producer.exited;
    expect(done.code, done.stderr).toBe(0);

    const text = await readFile(join(batchStateDir(dir, "hosts"), "results.jsonl"), "utf8");
    const results = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(results).toHaveLength(ITEMS);
    expect(new Set(results.map((line) => line.id)).size).toBe(ITEMS);
    expect(results.every((line) => line.status === "succeeded")).toBe(true);
    // The unplugged worker is still running, cut off: nothing it finished after the cable went
    // was recorded, and the items it held ran again on the hosts that were left.
    expect(lost.child.exitCode).toBeNull();
    const report = JSON.parse(await readFile(join(batchStateDir(dir, "hosts"), "report.json"), "utf8"));
    expect(report.queue.reExecutedItems).toBeGreaterThanOrEqual(1);
    const ranElsewhere = workers.slice(0, 3).reduce((sum, worker) => sum + okLines(worker.stderr()), 0);
    expect(ranElsewhere + recordedBefore).toBeGreaterThanOrEqual(ITEMS);
    for (const worker of workers.slice(0, 3)) expect(okLines(worker.stderr())).toBeGreaterThan(0);
  }, 120_000);
});
