import { access, mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  batchStateDir,
  type RedisServer,
  runCliInProcess,
  startCli,
  startCliInProcess,
  startRedisServer,
} from "@forkloop/cli/testing";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { toolThenTextBrain } from "@forkloop/sim/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appliedIds, appliesRecords } from "./support/applies-log.js";
import { git, gitProject } from "./support/git-project.js";

/**
 * R-B1, R-B2, R-B3, R-B4: `forkloop batch --isolate --queue` on a real redis-server, producer and
 * `forkloop worker` in this process, the model a scripted server over real HTTP. Every item runs
 * one Bash command, `pwd > where.txt`: on its worker, in a worktree of the batch's base commit;
 * its change returns with its result and the producer merges it into the tree once — the first
 * applied wins, the others created the same file with other content: conflicts, diffs kept.
 * One case spawns the producer (the built CLI) to kill -9 it mid-apply: the process is the subject.
 */
let root: string;
let home: string;
let redis: RedisServer;
let server: Simulator;
/** Its items each write FILES files into a directory of their own: an apply long enough to cut. */
let manyFiles: Simulator;
const FILES = 300;
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-queue-isolate-")));
  home = join(root, "home");
  await mkdir(home);
  redis = await startRedisServer();
  server = await startSimulator({
    brain: toolThenTextBrain({ name: "Bash", input: { command: "pwd > where.txt" } }, "done"),
  });
  manyFiles = await startSimulator({
    brain: toolThenTextBrain(
      {
        name: "Bash",
        input: {
          command: `d="out/$(basename "$PWD")"; mkdir -p "$d"; for i in $(seq 1 ${FILES}); do echo "$i" > "$d/$i.txt"; done`,
        },
      },
      "done",
    ),
  });
});
afterAll(async () => {
  await manyFiles?.close();
  await server?.close();
  await redis?.stop();
  await rm(root, { recursive: true, force: true });
});

const project = (name: string, repo = true) =>
  gitProject(join(root, name), { "items.jsonl": '{"n":1}\n{"n":2}\n{"n":3}\n' }, repo);

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, HOME: home });
const batch = (id: string, ...extra: string[]) => [
  "batch",
  "--items",
  "items.jsonl",
  "--prompt",
  "Record where you work ({{item.n}}).",
  "--permission-mode",
  "acceptEdits",
  "--allowed-tools",
  "Bash",
  "--queue",
  redis.url,
  "--id",
  id,
  ...extra,
];
const startWorker = (cwd: string, environment = env(), ...extra: string[]) =>
  startCliInProcess(
    [
      "worker",
      "--queue",
      redis.url,
      ...(extra.includes("--concurrency") ? [] : ["--concurrency", "3"]),
      "--sandbox",
      "off",
      "--lock-duration",
      "2000",
      ...extra,
    ],
    { cwd, env: environment },
  );

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

interface Row {
  readonly status: string;
  readonly applied?: readonly string[];
  readonly error?: {
    readonly code: string;
    readonly message: string;
    readonly conflict?: { readonly files: unknown; readonly patch: string };
  };
}

/**
 * Where the worker said it makes an isolated batch's item copies: placed as a local batch's are,
 * in memory when there is room (/dev/shm here), else under its own directory of the batch.
 */
function workerCopies(stderr: string, batchDir: string): string {
  const at = /item copies in (\S+)/.exec(stderr)?.[1];
  expect(at, stderr).toBeDefined();
  expect(
    [join(batchDir, "workers", String(process.pid), "workspaces"), "/dev/shm/"].some((dir) =>
      at!.startsWith(dir),
    ),
  ).toBe(true);
  return at!;
}

async function rows(dir: string, id: string): Promise<Row[]> {
  const text = await readFile(join(batchStateDir(dir, id, home), "results.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Row);
}

describe("R-B2: forkloop batch --isolate --queue isolates items on their workers", {
  timeout: 120_000,
}, () => {
  it("R-B2, R-B3, R-B4: each item runs in a worktree on its worker; its change is applied by the producer once, overlapping ones kept as conflicts; no worktree left; a re-attach applies nothing again", async () => {
    const dir = await project("queued");
    const worker = startWorker(dir);
    const result = await runCliInProcess(batch("qiso", "--isolate"), { cwd: dir, env: env() }).finally(() =>
      worker.stop(),
    );
    expect(result.code, `${result.stderr}\nworker:\n${worker.stderr()}`).toBe(6); // some failed: the conflicts
    expect(result.stderr.match(/items are isolated/g)).toHaveLength(1);
    expect(worker.stderr()).toContain("items are isolated: each runs in a git worktree of");
    const batchDir = batchStateDir(dir, "qiso", home);
    // The command ran in a worktree of the worker's, and only the producer wrote the project.
    // Placed as a local batch's are (in memory when there is room, else under the worker's own
    // directory of the batch), and said on the worker's start line.
    const where = (await readFile(join(dir, "where.txt"), "utf8")).trim();
    expect(where.startsWith(workerCopies(worker.stderr(), batchDir))).toBe(true);
    const first = await rows(dir, "qiso");
    expect(first.filter((row) => row.status === "succeeded").map((row) => row.applied)).toEqual([
      ["where.txt"],
    ]);
    const conflicts = first.filter((row) => row.error?.code === "conflict");
    expect(conflicts).toHaveLength(2);
    for (const row of conflicts) {
      expect(row.error?.conflict?.files).toEqual([
        { path: "where.txt", reason: "created both in the workspace and by the item" },
      ]);
      expect(await readFile(row.error!.conflict!.patch, "utf8")).toContain("+++ b/where.txt");
      expect(row.error?.message).toContain(
        `forkloop batch --resume qiso --queue ${redis.url} --retry-conflicts`,
      );
    }
    // Every worktree is gone: the worker removes its copies when it stops, the producer makes none.
    expect(git(dir, "worktree", "list").trim().split("\n")).toHaveLength(1);

    // Re-attached: the results stand and nothing is applied a second time.
    const log = await readFile(join(batchDir, "applies.log"), "utf8");
    const again = await runCliInProcess(["batch", "--resume", "qiso", "--queue", redis.url], {
      cwd: dir,
      env: env(),
    });
    expect(again.code, again.stderr).toBe(6);
    expect(await readFile(join(batchDir, "applies.log"), "utf8")).toBe(log);
    expect((await readFile(join(dir, "where.txt"), "utf8")).trim()).toBe(where);
    expect((await rows(dir, "qiso")).map((row) => row.error?.code ?? row.status).sort()).toEqual([
      "conflict",
      "conflict",
      "succeeded",
    ]);
  });

  it("R-B3: a producer process kill -9'd between an item's apply and its record finishes that apply when re-attached — nothing applied twice, nothing lost", async () => {
    const dir = await project("killed-producer");
    const environment = { ...env(), ANTHROPIC_BASE_URL: manyFiles.url };
    const worker = startWorker(dir, environment, "--allow-dangerously-skip-permissions");
    try {
      // Its paths are only known at run time ($d, $i): the mode lets the command write them.
      const args = batch("qkill", "--isolate").map((arg) =>
        arg === "acceptEdits" ? "bypassPermissions" : arg,
      );
      const producer = startCli(args, { cwd: dir, env: environment });
      const log = join(batchStateDir(dir, "qkill", home), "applies.log");
      const records = () => appliesRecords(log);
      // Killed as soon as the log names an apply that has no settled record yet: its plan's
      // writes (FILES files, each fsync'd) are under way.
      let cut: string | undefined;
      while (cut === undefined && producer.child.exitCode === null) {
        const seen = await records();
        const settled = new Set(seen.filter((r) => r.type === "settled").map((r) => r.id));
        cut = seen.flatMap(appliedIds).find((id) => !settled.has(id));
        if (cut === undefined) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      producer.child.kill("SIGKILL");
      const killed = await producer.exited;
      expect(
        cut,
        `the producer exited before an apply could be cut: ${JSON.stringify(await records())} ${killed.code} ${killed.signal}\n${killed.stdout}\n${killed.stderr}\nworker:\n${worker.stderr()}`,
      ).toBeDefined();
      expect(killed.signal).toBe("SIGKILL");
      const before = await records();
      expect(before.some((r) => r.type === "settled" && r.id === cut)).toBe(false);

      const again = await runCliInProcess(["batch", "--resume", "qkill", "--queue", redis.url], {
        cwd: dir,
        env: environment,
      });
      expect(again.code, again.stderr).toBe(0);
      // Each item's change applied once: named by one applying (or applying_group) record and
      // settled once, the cut one's apply the killed producer's (the re-attach finished its plan,
      // never a new one).
      const after = await records();
      const applied = (id: string) => after.filter((r) => appliedIds(r).includes(id)).length;
      const settledOnce = (id: string) => after.filter((r) => r.type === "settled" && r.id === id).length;
      const itemIds = [
        ...new Set(after.flatMap((r) => (r.id === undefined ? appliedIds(r) : [r.id]))),
      ].sort();
      expect(itemIds).toHaveLength(3);
      for (const id of itemIds) expect([applied(id), settledOnce(id)]).toEqual([1, 1]);
      expect(after.slice(0, before.length)).toEqual(before);
      expect(after.slice(before.length).filter((r) => appliedIds(r).includes(cut!))).toEqual([]);
      // Nothing lost: every item's FILES files are in the tree, whole.
      expect((await rows(dir, "qkill")).map((row) => row.status)).toEqual(Array(3).fill("succeeded"));
      const out = await readdir(join(dir, "out"));
      expect(out).toHaveLength(3);
      for (const name of out) {
        const files = await readdir(join(dir, "out", name));
        expect(files).toHaveLength(FILES);
        for (const file of files)
          expect(await readFile(join(dir, "out", name, file), "utf8")).toBe(`${file.replace(".txt", "")}\n`);
      }
    } finally {
      await worker.stop();
    }
  });

  it("R-B2: a worker reuses its copies — one item at a time, every item runs in the same worktree, put back to the base between items, removed when the worker stops", async () => {
    const dir = await project("reused");
    const worker = startWorker(dir, env(), "--concurrency", "1");
    const result = await runCliInProcess(batch("qreuse", "--isolate"), { cwd: dir, env: env() }).finally(() =>
      worker.stop(),
    );
    // Each item wrote the same path (its copy's) into where.txt: the first change is applied, the
    // next two are already there. A copy per item would make them conflicts (exit 6).
    expect(result.code, `${result.stderr}\nworker:\n${worker.stderr()}`).toBe(0);
    const where = (await readFile(join(dir, "where.txt"), "utf8")).trim();
    const copies = workerCopies(worker.stderr(), batchStateDir(dir, "qreuse", home));
    expect(where.startsWith(copies)).toBe(true);
    const applied = (await rows(dir, "qreuse")).map((row) => row.applied?.join(",") ?? row.status).sort();
    expect(applied).toEqual(["", "", "where.txt"]);
    expect(git(dir, "worktree", "list").trim().split("\n")).toHaveLength(1);
    // Nor the directory they were made in, when it was placed outside the batch's (in memory).
    if (copies.startsWith("/dev/shm/")) expect(await exists(copies)).toBe(false);
  });

  it("R-B2 control: without --isolate, queued items run in the worker's checkout itself", async () => {
    const dir = await project("in-place");
    const worker = startWorker(dir);
    const result = await runCliInProcess(batch("qplain"), { cwd: dir, env: env() }).finally(() =>
      worker.stop(),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain("items are isolated");
    expect((await readFile(join(dir, "where.txt"), "utf8")).trim()).toBe(dir);
  });

  it("bad input: --isolate --queue outside git, or with uncommitted changes, is exit 2 naming the fix, before any state exists", async () => {
    const plain = await project("plain", false);
    const outside = await runCliInProcess(batch("qplainrepo", "--isolate"), { cwd: plain, env: env() });
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain("needs a git repository with a commit");
    expect(outside.stderr).toContain("drop --isolate");
    expect(await exists(batchStateDir(plain, "qplainrepo", home))).toBe(false);
    const dirty = await project("dirty");
    await writeFile(join(dirty, "draft.txt"), "not committed\n");
    const refused = await runCliInProcess(batch("qdirty", "--isolate"), { cwd: dirty, env: env() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("draft.txt");
    expect(refused.stderr).toContain("git add -A && git commit");
    expect(await exists(batchStateDir(dirty, "qdirty", home))).toBe(false);
  });
});
