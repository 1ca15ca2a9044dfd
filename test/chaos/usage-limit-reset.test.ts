import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { poolClock, skipAheadClock, skippedMs } from "@forkloop/orchestrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EndpointInFront, endpointInFront } from "../support/endpoint-in-front.js";

/**
 * R-R11 for a whole batch: a usage limit that resets in an hour. Before, the pool paused an hour
 * but the item said "attempt 1/10 in 32s" and spent its attempts, so a limit that resets in hours
 * failed items. The endpoint here is the simulator behind a limit of its own: from the second
 * request on, it answers 429 until an hour later on the batch's clock — a skip-ahead clock shared
 * by the test and every worker thread, so the hour passes at once.
 */
const HOUR_MS = 3_600_000;
const clock = skipAheadClock();
const now = poolClock(clock).now;
/** When the limit lifts on the batch's clock (set by the first 429). */
let resetAt: number | undefined;
const seen: { at: number; answered: 429 | "passed" }[] = [];

let dir: string;
let sim: SimHandle;
let endpoint: EndpointInFront;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-usage-limit-"));
  await mkdir(join(dir, "src"));
  for (let index = 0; index < 8; index++)
    await writeFile(join(dir, "src", `f${index}.ts`), `export const f${index} = ${index};\n`);
  sim = await startSimInProcess(dir, ["--faults", "slow@1+:slow_ms=20"]);
  endpoint = await endpointInFront(sim.url, (_req, res) => {
    const at = now();
    if (seen.length === 1) resetAt = at + HOUR_MS;
    if (resetAt === undefined || at >= resetAt) {
      seen.push({ at, answered: "passed" });
      return false;
    }
    seen.push({ at, answered: 429 });
    // As the API says it: whole seconds until the reset, rounded up.
    res.writeHead(429, {
      "content-type": "application/json",
      "retry-after": String(Math.ceil((resetAt - at) / 1000)),
    });
    res.end(
      JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "usage limit reached" } }),
    );
    return true;
  });
});
afterAll(async () => {
  await endpoint?.close();
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("R-R11 chaos: a batch meets a usage limit that resets in an hour", () => {
  it("R-R11: retry-after 3600 on a simulated clock — one pause line, no attempt spent, 0 failed items; nothing is sent before the reset", async () => {
    const result = await runCliInProcess(
      [
        "batch",
        "--files",
        "src/*.ts",
        "--prompt",
        "Summarize {{file}}",
        "--concurrency",
        "3",
        "--id",
        "limit",
      ],
      { cwd: dir, env: endpoint.env, clock },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("8 items: 8 succeeded, 0 failed");
    const pauses = result.stderr.match(/^rate limited \(429 on .*\): pausing all workers for .*$/gm) ?? [];
    expect(pauses, result.stderr).toHaveLength(1);
    expect(pauses[0]).toMatch(/pausing all workers for 1h00m, until .*; items wait, none fails$/);
    // Waiting for the reset is no failed attempt: no backoff retry, nothing said per item.
    expect(result.stderr).not.toMatch(/^retrying /m);
    // The batch's clock waited the hour out; every request it let through came after the reset.
    expect(skippedMs(clock)).toBeGreaterThanOrEqual(HOUR_MS - 1_000);
    const limited = seen.filter((request) => request.answered === 429);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    // At most the items in flight when the limit began met it: the pause held every later request.
    expect(limited.length).toBeLessThanOrEqual(3);
    for (const request of seen.slice(1).filter((each) => each.answered === "passed"))
      expect(request.at).toBeGreaterThanOrEqual(resetAt ?? Number.POSITIVE_INFINITY);
  }, 120_000);
});
