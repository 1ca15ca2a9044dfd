import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readJournal } from "@forkloop/batch";
import {
  batchStateDir,
  runCliInProcess as runCli,
  type SimHandle,
  startCliInProcess,
  startRedisServer,
  startSimInProcess,
} from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EndpointInFront, endpointInFront } from "../support/endpoint-in-front.js";

/**
 * R-R9: failures of the whole batch stop the batch. Before, a revoked key failed every remaining
 * item in seconds (exit 6) and a plain `--resume` then did nothing; a proxy's `200 text/html` login
 * page was retried as a dropped stream for ~160 s per request and failed every item. The endpoint
 * here is a small server in front of the simulator that can turn into each of those.
 */
type Mode = "pass" | "revoked" | "login-page" | "other-json" | "html-404";
let mode: Mode = "pass";
/** Requests after which the endpoint turns into `switchTo` (for a failure in the middle of a batch). */
let switchAfter = Number.POSITIVE_INFINITY;
let switchTo: Mode = "pass";
let seen = 0;
const answered: Mode[] = [];

let dir: string;
let sim: SimHandle;
let endpoint: EndpointInFront;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-whole-batch-"));
  await mkdir(join(dir, "src"));
  for (let index = 0; index < 10; index++)
    await writeFile(join(dir, "src", `f${index}.ts`), `export const f${index} = ${index};\n`);
  sim = await startSimInProcess(dir, ["--faults", "slow@1+:slow_ms=20"]);
  endpoint = await endpointInFront(sim.url, (_req, res) => {
    seen++;
    if (seen > switchAfter) [mode, switchAfter] = [switchTo, Number.POSITIVE_INFINITY];
    answered.push(mode);
    switch (mode) {
      case "revoked":
        res.writeHead(401, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            type: "error",
            error: { type: "authentication_error", message: "invalid x-api-key" },
          }),
        );
        return true;
      case "login-page":
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(
          "<!doctype html><html><head><title>Sign in - Corp Proxy</title></head><body>log in</body></html>",
        );
        return true;
      case "other-json":
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ status: "ok", service: "inventory" }));
        return true;
      case "html-404":
        res.writeHead(404, { "content-type": "text/html" });
        res.end("<html><head><title>404 Not Found</title></head><body>nginx</body></html>");
        return true;
      case "pass":
        return false;
    }
  });
});
afterAll(async () => {
  await endpoint?.close();
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

function reset(next: Mode, after = Number.POSITIVE_INFINITY, then: Mode = "pass"): void {
  [mode, switchAfter, switchTo, seen] = [next, after, then, 0];
  answered.length = 0;
}

const batch = (...args: string[]) => runCli(["batch", ...args], { cwd: dir, env: endpoint.env });
const start = (id: string) =>
  batch("--files", "src/*.ts", "--prompt", "Summarize {{file}}", "--concurrency", "2", "--id", id);

/** Each item's completions in the journal: exactly one per item once finished. */
async function completions(id: string): Promise<Map<string, number>> {
  const { records } = await readJournal(batchStateDir(dir, id));
  const counts = new Map<string, number>();
  for (const record of records)
    if (record.type === "completed") counts.set(record.id, (counts.get(record.id) ?? 0) + 1);
  return counts;
}

describe("R-R9 chaos: a failure of the whole batch stops it, the rest pending, and a plain --resume finishes", () => {
  it("a key revoked mid-batch: stops at once (exit 2, the fix named), no item failed; once the key works, --resume finishes every item once", async () => {
    reset("pass", 6, "revoked");
    const stopped = await start("revoked");
    expect(stopped.code, stopped.stderr).toBe(2);
    expect(stopped.stderr).toMatch(
      /^forkloop batch revoked: stopped: http:\/\/127\.0\.0\.1:\d+ refused the API key \(401: invalid x-api-key\)\. Set ANTHROPIC_API_KEY to a valid key; \d+ items left pending — fix it, then `forkloop batch --resume revoked` finishes them\.$/m,
    );
    expect(stopped.stdout).toMatch(/10 items: [1-9] succeeded, 0 failed, \d+ not finished/);
    // At once: the items in flight when the key went, not one 401 (and ten retries) per item.
    expect(answered.filter((answer) => answer === "revoked").length).toBeLessThanOrEqual(2);

    reset("pass");
    const resumed = await batch("--resume", "revoked");
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("10 items: 10 succeeded, 0 failed");
    expect([...(await completions("revoked")).values()]).toEqual(Array(10).fill(1));
  }, 240_000);

  it.each([
    [
      "a proxy's HTML login page (200 text/html)",
      "login-page" as const,
      'is not an Anthropic Messages API endpoint: the endpoint answered 200 with text/html; charset=utf-8 (an HTML page titled "Sign in - Corp Proxy") instead of an event stream. Check ANTHROPIC_BASE_URL (the API\'s root, e.g. https://api.anthropic.com, without /v1; a proxy may want you to log in first), or unset it for the Anthropic API',
    ],
    [
      "another API's JSON (200 application/json)",
      "other-json" as const,
      'is not an Anthropic Messages API endpoint: the endpoint answered 200 with application/json ({"status":"ok","service":"inventory"}) instead of an event stream',
    ],
    [
      "a 404 on the messages path",
      "html-404" as const,
      'is not an Anthropic Messages API endpoint: the endpoint answered 404 to POST /v1/messages (an HTML page titled "404 Not Found"). Check ANTHROPIC_BASE_URL',
    ],
  ])(
    "%s: one request, exit 2 naming it, every item pending; after the fix --resume finishes",
    async (_name, wrong, message) => {
      const id = `wrong-${wrong}`;
      reset(wrong);
      const stopped = await start(id);
      expect(stopped.code, stopped.stderr).toBe(2);
      expect(stopped.stderr).toContain(message);
      expect(stopped.stderr).toContain(
        `10 items left pending — fix it, then \`forkloop batch --resume ${id}\` finishes them.`,
      );
      expect(answered).toEqual([wrong]);

      reset("pass");
      const resumed = await batch("--resume", id);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain("10 items: 10 succeeded, 0 failed");
    },
    240_000,
  );

  it.each([
    [
      "login-page" as const,
      'the endpoint answered 200 with text/html; charset=utf-8 (an HTML page titled "Sign in - Corp Proxy") instead of an event stream',
    ],
    [
      "html-404" as const,
      'the endpoint answered 404 to POST /v1/messages (an HTML page titled "404 Not Found")',
    ],
    [
      "revoked" as const,
      "refused the API key (401: invalid x-api-key). Set ANTHROPIC_API_KEY to a valid key",
    ],
  ])(
    "forkloop run against %s: one request, one line naming what came back and the fix (never markup), exit 2; once fixed, the session continues",
    async (wrong, said) => {
      reset(wrong);
      const run = await runCli(["run", "Hello"], { cwd: dir, env: endpoint.env });
      expect(run.code, run.stderr).toBe(2);
      const [line = ""] = run.stderr.split("\n");
      expect(line).toMatch(/^API Error: http:\/\/127\.0\.0\.1:\d+ /);
      expect(line).toContain(said);
      expect(line).not.toMatch(/<html|<title|--model/i);
      if (wrong !== "revoked")
        expect(line).toContain("is not an Anthropic Messages API endpoint: the endpoint answered");
      expect(answered).toEqual([wrong]);
      // Nothing lost: the line names the resume, and once the endpoint works it goes on.
      const resume = /then continue the session with `forkloop run --resume ([0-9a-f-]{36}) "…"`\.$/.exec(
        line,
      );
      expect(resume, line).not.toBeNull();
      reset("pass");
      const resumed = await runCli(["run", "--resume", resume?.[1] ?? "", "Hello again"], {
        cwd: dir,
        env: endpoint.env,
      });
      expect(resumed.code, resumed.stderr).toBe(0);
    },
    60_000,
  );

  it("an item's own failure is listed with --retry-failed in the summary and in batch status", async () => {
    reset("pass");
    // One turn is too few for the simulator's read-then-summarize: each item fails on its own.
    const own = await batch(
      "--files",
      "src/f[01].ts",
      "--prompt",
      "Summarize {{file}}",
      "--max-turns",
      "1",
      "--id",
      "own",
    );
    expect(own.code, own.stderr).toBe(7);
    expect(own.stdout).toContain(
      "failed: src/f0.ts, src/f1.ts — `forkloop batch --resume own --retry-failed` runs them again",
    );
    const status = await batch("status", "own");
    expect(status.stdout).toContain(
      "failed: src/f0.ts, src/f1.ts — `forkloop batch --resume own --retry-failed` runs them again",
    );
  }, 240_000);
});

describe("R-R9 chaos: a queue worker whose key is refused stops; its items wait for one that works", () => {
  it("a worker with a revoked key: exit 2 naming the fix, its items back on the queue, none failed; a worker with a good key finishes the batch", async () => {
    const redis = await startRedisServer();
    try {
      reset("revoked");
      const producer = startCliInProcess(
        [
          "batch",
          "--files",
          "src/*.ts",
          "--prompt",
          "Summarize {{file}}",
          "--queue",
          redis.url,
          "--id",
          "queued",
        ],
        { cwd: dir, env: endpoint.env },
      );
      await producer.waitFor(producer.stderr, (text) => text.includes("forkloop batch queued: 10 items"));
      const worker = ["worker", "--queue", redis.url, "--concurrency", "3"];
      const refused = await runCli(worker, { cwd: dir, env: endpoint.env });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toMatch(
        /: stopped: http:\/\/127\.0\.0\.1:\d+ refused the API key \(401: invalid x-api-key\)\. Set ANTHROPIC_API_KEY to a valid key; the items it could not run went back to the queue, none failed — fix it, then start the worker again$/m,
      );
      // Handed back, not failed: no attempt of any item was spent on this host's key.
      expect(refused.stderr).not.toMatch(/^(FAILED|retry) /m);
      // The items in flight when it met the key, not every item's attempts.
      expect(answered.length).toBeLessThanOrEqual(3);

      reset("pass");
      const good = startCliInProcess(worker, { cwd: dir, env: endpoint.env });
      const done = await producer.exited;
      await good.stop();
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toContain("10 items: 10 succeeded, 0 failed");
    } finally {
      await redis.stop();
    }
  }, 240_000);
});
