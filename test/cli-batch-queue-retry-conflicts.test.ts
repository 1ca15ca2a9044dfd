import { mkdir, mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectQueue, parseQueueUrl } from "@forkloop/batch";
import {
  batchStateDir,
  type RedisServer,
  runCliInProcess,
  type SimHandle,
  startCliInProcess,
  startRedisServer,
} from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAppendSim } from "./support/append-scenario.js";
import { appliesRecords } from "./support/applies-log.js";
import { git, gitProject } from "./support/git-project.js";

/**
 * R-B4 `--resume ID --queue URL --retry-conflicts` through the CLI, a real redis-server, a
 * `forkloop worker` in this process, real git worktrees and the simulator: two isolated items each
 * append a line to the end of shared.txt on the worker, both from the batch's base. The producer
 * applies the first change it settles; the second touches the same spot: a conflict. The retry
 * puts that item back on the queue from the producer's tree as it is now (a commit of it), the
 * worker runs it in a worktree of that commit, and its new append is applied after the first. The
 * producer's journal (applies.log) names the round once; the control re-attaches without the flag.
 */
let root: string;
let home: string;
let sim: SimHandle;
let redis: RedisServer;
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-queue-retry-")));
  home = join(root, "home");
  await mkdir(home);
  redis = await startRedisServer();
  sim = await startAppendSim(root);
});
afterAll(async () => {
  await sim?.stop();
  await redis?.stop();
  await rm(root, { recursive: true, force: true });
});

const project = (name: string) =>
  gitProject(join(root, name), { "items.jsonl": '{"n":1}\n{"n":2}\n', "shared.txt": "base\n" });
const env = () => ({ ...sim.env, HOME: home });
const cli = (dir: string, args: string[]) => runCliInProcess(args, { cwd: dir, env: env() });
const messages = async () => (await sim.requests()).filter((record) => record.path === "/v1/messages").length;
const worker = (dir: string) =>
  startCliInProcess(
    ["worker", "--queue", redis.url, "--concurrency", "1", "--sandbox", "off", "--lock-duration", "2000"],
    { cwd: dir, env: env() },
  );

interface Row {
  readonly id: string;
  readonly status: string;
  readonly attempts: number;
  readonly applied?: readonly string[];
  readonly error?: { readonly code: string; readonly message: string };
}
async function rows(dir: string, id: string): Promise<Row[]> {
  return (await readFile(join(batchStateDir(dir, id, home), "results.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Row);
}
const applies = (dir: string, id: string) =>
  appliesRecords(join(batchStateDir(dir, id, home), "applies.log"));
const retry = (dir: string, id: string) =>
  cli(dir, ["batch", "--resume", id, "--queue", redis.url, "--retry-conflicts"]);
const words = ["one", "two"];

/** Runs the two items on the queue: the first applied, the second a conflict; returns its id. */
async function conflictedBatch(dir: string, id: string): Promise<{ applied: Row; conflict: Row }> {
  const first = await cli(dir, [
    "batch",
    "--items",
    "items.jsonl",
    "--prompt",
    "Append your word (item {{item.n}}).",
    "--permission-mode",
    "acceptEdits",
    "--allowed-tools",
    "Bash",
    "--isolate",
    "--queue",
    redis.url,
    "--id",
    id,
  ]);
  expect(first.code, first.stderr).toBe(6);
  const all = await rows(dir, id);
  const applied = all.find((row) => row.status === "succeeded")!;
  const conflict = all.find((row) => row.error?.code === "conflict")!;
  expect([applied?.applied, conflict?.attempts]).toEqual([["shared.txt"], 1]);
  expect(conflict.error?.message).toContain(
    `forkloop batch --resume ${id} --queue ${redis.url} --retry-conflicts`,
  );
  const word = words[all.indexOf(applied)];
  expect(await readFile(join(dir, "shared.txt"), "utf8")).toBe(`base\n${word}\n`);
  return { applied, conflict };
}

describe("R-B4: forkloop batch --resume ID --queue URL --retry-conflicts", { timeout: 120_000 }, () => {
  it("R-B4: the conflicted item runs again on its worker from the producer's tree as it is now and is applied; its conflict superseded in the journal once; the other item untouched; the ref holding the round's base deleted once it settled", async () => {
    const dir = await project("retry");
    const running = worker(dir);
    try {
      const { applied, conflict } = await conflictedBatch(dir, "qretry");
      const order = (await rows(dir, "qretry")).map((row) => row.id);
      const before = await messages();
      const retried = await retry(dir, "qretry");
      expect(retried.code, `${retried.stderr}\nworker:\n${running.stderr()}`).toBe(0);
      expect(retried.stderr).toContain("retrying 1 item (--retry-conflicts) on its workers");
      // One item ran (a tool call and its answer): the conflicted one, in a worktree of the new base.
      expect((await messages()) - before).toBe(2);
      const base = /commit ([0-9a-f]{12})/.exec(retried.stderr)?.[1];
      expect(running.stderr()).toContain(`each runs in a git worktree of ${base}`);
      const [firstWord, secondWord] = order.indexOf(applied.id) === 0 ? ["one", "two"] : ["two", "one"];
      expect(await readFile(join(dir, "shared.txt"), "utf8")).toBe(`base\n${firstWord}\n${secondWord}\n`);
      // The round is settled: the ref its base was held by (for workers to fetch) is gone.
      expect(git(dir, "for-each-ref", "refs/forkloop")).toBe("");
      const after = await rows(dir, "qretry");
      expect(after.map((row) => [row.id, row.status, row.attempts, row.applied])).toEqual(
        order.map((id) =>
          id === conflict.id ? [id, "succeeded", 2, ["shared.txt"]] : [id, "succeeded", 1, ["shared.txt"]],
        ),
      );
      // The journal: the conflict, one round naming it, then its new result applied.
      const log = await applies(dir, "qretry");
      expect(log.filter((record) => record.type === "retry").map((record) => record.ids)).toEqual([
        [conflict.id],
      ]);
      expect(
        log
          .filter((record) => record.type === "settled" && record.id === conflict.id)
          .map((record) => record.outcome?.error?.code ?? "applied"),
      ).toEqual(["conflict", "applied"]);

      // Once more: nothing is a conflict now, so nothing runs and the journal is as it was.
      const settledLog = await readFile(join(batchStateDir(dir, "qretry", home), "applies.log"), "utf8");
      const again = await retry(dir, "qretry");
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain("no item has a conflict to retry");
      expect(await messages()).toBe(before + 2);
      expect(await readFile(join(batchStateDir(dir, "qretry", home), "applies.log"), "utf8")).toBe(
        settledLog,
      );
    } finally {
      await running.stop();
    }
    // The user's index, HEAD and branches are as they were; no worktree is left.
    expect(git(dir, "log", "--oneline").trim().split("\n")).toHaveLength(1);
    expect(git(dir, "status", "--porcelain")).toBe(" M shared.txt\n");
    expect(git(dir, "worktree", "list").trim().split("\n")).toHaveLength(1);
  });

  it("R-B4: a producer stopped after its journal named the round and before Redis had it (Redis out of memory) — the next re-attach, without the flag, puts the round on the queue and applies the item; the round named once", async () => {
    const dir = await project("cut");
    const running = worker(dir);
    const admin = await connectQueue(parseQueueUrl(redis.url));
    try {
      const { conflict } = await conflictedBatch(dir, "qcut");
      // Every write refused from here: the journal (on this host's disk) takes the round, Redis does not.
      await admin.config("SET", "maxmemory", "1");
      const cut = await retry(dir, "qcut");
      expect(cut.code, cut.stderr).not.toBe(0);
      expect(cut.stderr).toContain("out of memory");
      await admin.config("SET", "maxmemory", "0");
      expect((await rows(dir, "qcut")).find((row) => row.id === conflict.id)?.error?.code).toBe("conflict");
      const rounds = async () => (await applies(dir, "qcut")).filter((record) => record.type === "retry");
      expect((await rounds()).map((record) => record.ids)).toEqual([[conflict.id]]);

      const again = await cli(dir, ["batch", "--resume", "qcut", "--queue", redis.url]);
      expect(again.code, `${again.stderr}\nworker:\n${running.stderr()}`).toBe(0);
      expect((await readFile(join(dir, "shared.txt"), "utf8")).split("\n")).toHaveLength(4);
      expect((await rows(dir, "qcut")).find((row) => row.id === conflict.id)).toMatchObject({
        status: "succeeded",
        attempts: 2,
        applied: ["shared.txt"],
      });
      expect((await rounds()).map((record) => record.ids)).toEqual([[conflict.id]]);
    } finally {
      await admin.config("SET", "maxmemory", "0");
      admin.disconnect();
      await running.stop();
    }
  });

  it("R-B4 control: a re-attach without --retry-conflicts runs nothing and keeps the conflict", async () => {
    const dir = await project("control");
    const running = worker(dir);
    try {
      const { conflict } = await conflictedBatch(dir, "qcontrol");
      const shared = await readFile(join(dir, "shared.txt"), "utf8");
      const log = await readFile(join(batchStateDir(dir, "qcontrol", home), "applies.log"), "utf8");
      const before = await messages();
      const again = await cli(dir, ["batch", "--resume", "qcontrol", "--queue", redis.url]);
      expect(again.code, again.stderr).toBe(6);
      expect(await messages()).toBe(before);
      expect(await readFile(join(dir, "shared.txt"), "utf8")).toBe(shared);
      expect(await readFile(join(batchStateDir(dir, "qcontrol", home), "applies.log"), "utf8")).toBe(log);
      expect((await rows(dir, "qcontrol")).find((row) => row.id === conflict.id)).toMatchObject({
        status: "failed",
        error: { code: "conflict" },
      });
    } finally {
      await running.stop();
    }
  });
});
