import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createAgentPool } from "@forkloop/orchestrator";
import { testCacheSafeParams, testProfile } from "@forkloop/orchestrator/testing";
import { startSimulator } from "@forkloop/sim";
import { openWorkspaceIsolation, uncommittedChanges } from "@forkloop/tools/workspace";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dropSettledBase } from "./batch-isolation.js";
import { type ItemExecution, type ItemExecutor, type ItemOutcome, runBatch } from "./batch-runner.js";
import { isolateItems } from "./item-isolation.js";
import type { Claim, JobItem } from "./job-backend.js";
import { openLocalJournalBackend, readJournal } from "./local-journal-backend.js";
import { createPoolExecutor } from "./pool-executor.js";
import { itemResult } from "./testing/index.js";

let root: string;
let project: string;
let state: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-isolate-")));
  project = join(root, "project");
  state = join(root, "state");
  await mkdir(join(project, "src"), { recursive: true });
  await mkdir(state);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const gitIn = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" });

/** The shared file: one slot per item, a separator line between slots so their edits merge. */
const slots = (count: number) => Array.from({ length: count }, (_, n) => `slot ${n}: empty\n--\n`).join("");

async function seed(count: number, repo = true): Promise<void> {
  for (let n = 0; n < count; n++) await writeFile(join(project, "src", `f${n}.txt`), `file ${n}\n`);
  await writeFile(join(project, "shared.txt"), slots(count));
  if (repo) {
    gitIn(project, "init", "-q");
    gitIn(project, "add", "-A");
    gitIn(project, "commit", "-qm", "base");
  }
}

const items = (count: number): JobItem[] =>
  Array.from({ length: count }, (_, n) => ({ id: `i${n}`, label: `f${n}`, prompt: `edit ${n}` }));

const done = (text = "edited"): ItemOutcome => ({ ok: true, result: itemResult(text) });

/** Runs `work` in each claim's workspace (real files), then ends with `outcome`. */
function editingExecutor(
  work: (claim: Claim, dir: string) => Promise<ItemOutcome | undefined>,
  seen: string[] = [],
): ItemExecutor {
  return {
    startAll(claims) {
      return claims.map((claim): ItemExecution => {
        const dir = claim.workspace ?? project;
        seen.push(dir);
        return { result: work(claim, dir).then((outcome) => outcome ?? done()), cancel() {} };
      });
    },
  };
}

/** Item n writes its own file and its slot of the shared file. */
async function editItem(claim: Claim, dir: string): Promise<undefined> {
  const n = Number(claim.item.id.slice(1));
  await writeFile(join(dir, "src", `f${n}.txt`), `file ${n} edited by attempt ${claim.attempt}\n`);
  const shared = await readFile(join(dir, "shared.txt"), "utf8");
  await writeFile(join(dir, "shared.txt"), shared.replace(`slot ${n}: empty`, `slot ${n}: item ${n}`));
  return undefined;
}

async function runIsolated(count: number, executor: ItemExecutor, concurrency = 4) {
  const batchDir = join(state, "b1");
  await mkdir(batchDir, { recursive: true });
  const backend = await openLocalJournalBackend({ dir: batchDir });
  await backend.enqueue(items(count));
  const isolation = await openWorkspaceIsolation({ cwd: project, batchDir });
  try {
    const summary = await runBatch({
      backend,
      executor,
      concurrency,
      warm: false,
      isolation: isolateItems(isolation, batchDir),
    });
    return { summary, isolation, batchDir };
  } finally {
    await backend.close();
  }
}

/** A batch of `count` items over the seeded project: its directory, its journal and its isolation. */
async function openBatch(count: number) {
  await seed(count);
  const batchDir = join(state, "b1");
  await mkdir(batchDir, { recursive: true });
  const backend = await openLocalJournalBackend({ dir: batchDir });
  await backend.enqueue(items(count));
  const isolation = await openWorkspaceIsolation({ cwd: project, batchDir });
  return { batchDir, backend, isolation };
}

const expectedShared = (count: number, except: readonly number[] = []) =>
  Array.from(
    { length: count },
    (_, n) => `slot ${n}: ${except.includes(n) ? "empty" : `item ${n}`}\n--\n`,
  ).join("");

describe("R-B2, R-B3: each item in its own worktree, its change applied once", () => {
  it("R-B2: items work in worktrees at the base commit, never in the project; R-B3: every change is merged in, the worktrees are gone", async () => {
    await seed(8);
    const seen: string[] = [];
    const { summary, isolation } = await runIsolated(8, editingExecutor(editItem, seen));
    expect(isolation.mode).toBe("worktree");
    expect(summary.states.map((item) => item.status)).toEqual(Array(8).fill("succeeded"));
    expect(seen.every((dir) => dir.startsWith(join(state, "b1", "workspaces")))).toBe(true);
    // One copy per slot, reused: 8 items at concurrency 4 never need more than 4.
    expect(new Set(seen).size).toBeLessThanOrEqual(4);
    // Each item's own file and its slot of the shared file: merged three ways, none lost.
    expect(await readFile(join(project, "shared.txt"), "utf8")).toBe(expectedShared(8));
    for (let n = 0; n < 8; n++)
      expect(await readFile(join(project, "src", `f${n}.txt`), "utf8")).toBe(
        `file ${n} edited by attempt 1\n`,
      );
    expect(summary.states[3]?.result?.applied).toEqual(["shared.txt", "src/f3.txt"]);
    // No worktree leaks: git lists only the project, the workspaces directory is empty.
    expect(gitIn(project, "worktree", "list").trim().split("\n")).toHaveLength(1);
    expect(await readdir(join(state, "b1", "workspaces"))).toEqual([]);
  });

  it("R-B2: a project outside git is isolated with copies of a snapshot taken at the start", async () => {
    await seed(4, false);
    const { summary, isolation } = await runIsolated(4, editingExecutor(editItem));
    expect(isolation.mode).toBe("copy");
    expect(summary.states.map((item) => item.status)).toEqual(Array(4).fill("succeeded"));
    expect(await readFile(join(project, "shared.txt"), "utf8")).toBe(expectedShared(4));
    expect(await readdir(join(state, "b1", "workspaces"))).toEqual([]);
  });

  it("R-B2: a copy-mode snapshot leaves out the batch's state when that state lies inside the project", async () => {
    await seed(2, false);
    const inside = join(project, ".forkloop", "batches", "b1");
    await mkdir(inside, { recursive: true });
    const isolation = await openWorkspaceIsolation({ cwd: project, batchDir: inside, mode: "copy" });
    expect(isolation.mode).toBe("copy");
    const snapshot = (await readdir(join(inside, "base"))).sort();
    expect(snapshot).toEqual(["shared.txt", "src"]);
    expect(await readFile(join(inside, "base", "src", "f1.txt"), "utf8")).toBe("file 1\n");
  });

  it("R-B3: a failed or interrupted item's half-edit never reaches the workspace (control: the same edit succeeding does)", async () => {
    await seed(3);
    const executor = editingExecutor(async (claim, dir) => {
      await editItem(claim, dir);
      if (claim.item.id === "i0") return { ok: false, error: { code: "max_turns", message: "ran out" } };
      if (claim.item.id === "i1") return { ok: "cancelled" };
      return undefined;
    });
    const { summary } = await runIsolated(3, executor);
    // The cancelled one stays unsettled (running in this run, interrupted for a resume).
    expect(summary.states.map((item) => item.status)).toEqual(["failed", "running", "succeeded"]);
    expect(await readFile(join(project, "src", "f0.txt"), "utf8")).toBe("file 0\n");
    expect(await readFile(join(project, "src", "f1.txt"), "utf8")).toBe("file 1\n");
    expect(await readFile(join(project, "src", "f2.txt"), "utf8")).toBe("file 2 edited by attempt 1\n");
    expect(await readFile(join(project, "shared.txt"), "utf8")).toBe(expectedShared(3, [0, 1]));
  });

  it("R-B4: two items changing the same line: one applies, the other is a conflict with its diff kept and nothing of it written", async () => {
    await seed(2);
    const executor = editingExecutor(async (claim, dir) => {
      await editItem(claim, dir);
      await writeFile(join(dir, "README"), `written by ${claim.item.id}\n`);
      return undefined;
    });
    const { summary, batchDir } = await runIsolated(2, executor, 1);
    const [first, second] = summary.states;
    expect(first?.status).toBe("succeeded");
    expect(second?.status).toBe("failed");
    expect(second?.error?.code).toBe("conflict");
    expect(second?.error?.conflict?.files).toEqual([
      { path: "README", reason: "created both in the workspace and by the item" },
    ]);
    // Nothing of the conflicting item reached the tree: not even its own, mergeable file.
    expect(await readFile(join(project, "README"), "utf8")).toBe("written by i0\n");
    expect(await readFile(join(project, "src", "f1.txt"), "utf8")).toBe("file 1\n");
    // Its diff applies to the base: the whole change is kept.
    const patch = second!.error!.conflict!.patch;
    expect(patch.startsWith(join(batchDir, "conflicts"))).toBe(true);
    gitIn(project, "stash", "-u", "-q");
    try {
      gitIn(project, "apply", "--check", patch);
    } finally {
      gitIn(project, "stash", "pop", "-q");
    }
    // The conflicting item's worktree is kept for a look, and listed.
    expect(second?.error?.conflict?.workspace).toBeDefined();
    expect(gitIn(project, "worktree", "list")).toContain(join(batchDir, "workspaces"));
    // The journal knows: one applying record (the first item's), then its completion.
    const { records } = await readJournal(batchDir);
    expect(records.filter((record) => record.type === "applying").map((record) => record.id)).toEqual(["i0"]);
  });

  it("R-B4: a base that moved (the user committed a change to the same line) is a conflict, never a silent overwrite", async () => {
    await seed(1);
    const executor = editingExecutor(async (claim, dir) => {
      await editItem(claim, dir);
      // The user edits the same line while the item runs.
      await writeFile(join(project, "src", "f0.txt"), "the user's line\n");
      return undefined;
    });
    const { summary } = await runIsolated(1, executor);
    expect(summary.states[0]?.error?.code).toBe("conflict");
    expect(await readFile(join(project, "src", "f0.txt"), "utf8")).toBe("the user's line\n");
  });

  it("a dirty tree is named file by file; the batch's own state inside the checkout is not", async () => {
    await seed(1);
    await writeFile(join(project, "src", "f0.txt"), "dirty\n");
    await mkdir(join(project, ".forkloop", "batches"), { recursive: true });
    await writeFile(join(project, ".forkloop", "batches", "x"), "state\n");
    await writeFile(join(project, "new.txt"), "untracked\n");
    expect(await uncommittedChanges(project, [join(project, ".forkloop")])).toEqual([
      "src/f0.txt",
      "new.txt",
    ]);
  });
});

describe("R-B2: a run's copies are a pool, each put back to the base between items", () => {
  /** What an item finds in its copy before it touches anything. */
  const look = (dir: string) => ({
    dir,
    head: gitIn(dir, "rev-parse", "HEAD").trim(),
    status: gitIn(dir, "status", "--porcelain", "--ignored", "--untracked-files=all"),
  });

  /** Leaves everything a careless item can: an edit, a deletion, untracked and ignored files, a commit. */
  async function mess(claim: Claim, dir: string): Promise<void> {
    await editItem(claim, dir);
    await rm(join(dir, "src", "f2.txt"));
    await writeFile(join(dir, `left-by-${claim.item.id}.txt`), "untracked\n");
    await mkdir(join(dir, "build"), { recursive: true });
    await writeFile(join(dir, "build", "out.js"), "ignored\n");
    gitIn(dir, "add", "-A");
    gitIn(dir, "commit", "-qm", `committed by ${claim.item.id}`);
    await writeFile(join(dir, "src", "f0.txt"), "uncommitted after the commit\n");
  }

  it("R-B2: a copy is reused after a success and after a failure, and holds no file of the previous item (control: the first item's copy is the base)", async () => {
    await seed(3);
    await writeFile(join(project, ".gitignore"), "build/\n");
    gitIn(project, "add", "-A");
    gitIn(project, "commit", "-qm", "ignore build");
    const base = gitIn(project, "rev-parse", "HEAD").trim();
    const seen: ReturnType<typeof look>[] = [];
    const executor = editingExecutor(async (claim, dir) => {
      seen.push(look(dir));
      await mess(claim, dir);
      // i0 fails after its mess; i1 succeeds after its own; i2 only looks.
      if (claim.item.id === "i0") return { ok: false, error: { code: "max_turns", message: "ran out" } };
      return undefined;
    });
    const { summary } = await runIsolated(3, executor, 1);
    expect(summary.states.map((item) => item.status)).toEqual(["failed", "succeeded", "succeeded"]);
    // One copy for the three items, at the base with nothing in it each time.
    expect(new Set(seen.map((view) => view.dir)).size).toBe(1);
    for (const view of seen) expect(view).toEqual({ dir: seen[0]!.dir, head: base, status: "" });
    expect(await readdir(join(state, "b1", "workspaces"))).toEqual([]);
    expect(gitIn(project, "worktree", "list").trim().split("\n")).toHaveLength(1);
  });

  it("R-B2: each item of the first wave starts once its own copy is made, not when the wave's last copy is", async () => {
    const { batchDir, backend, isolation } = await openBatch(2);
    const events: string[] = [];
    let firstStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      firstStarted = resolve;
    });
    let made = 0;
    // The second copy is made only after an item has started; a runner that waited for the whole
    // wave would wait here until the fallback (no deadlock), and start its items after it.
    const slowSecond = {
      ...isolation,
      async create(key: string) {
        const copy = await isolation.create(key);
        if (made++ === 1) {
          await Promise.race([started, new Promise((resolve) => setTimeout(resolve, 5_000))]);
          events.push("second copy made");
        }
        return copy;
      },
    };
    const executor = editingExecutor(async (claim, dir) => {
      events.push(`${claim.item.id} started`);
      firstStarted();
      return editItem(claim, dir);
    });
    try {
      const summary = await runBatch({
        backend,
        executor,
        concurrency: 2,
        warm: false,
        isolation: isolateItems(slowSecond, batchDir),
      });
      expect(summary.states.map((item) => item.status)).toEqual(["succeeded", "succeeded"]);
    } finally {
      await backend.close();
    }
    expect(events).toHaveLength(3);
    expect(events[0]).toMatch(/^i[01] started$/);
    expect(events[1]).toBe("second copy made");
    expect(await readFile(join(project, "shared.txt"), "utf8")).toBe(expectedShared(2));
  });

  it("R-B2: a copy that cannot be put back is removed, never handed to the next item", async () => {
    await seed(2);
    const seen: string[] = [];
    const executor = editingExecutor(async (claim, dir) => {
      seen.push(dir);
      await editItem(claim, dir);
      // The worktree's link to its repository is gone: git can no longer reset it.
      if (claim.item.id === "i0") await rm(join(dir, ".git"));
      return claim.item.id === "i0"
        ? { ok: false, error: { code: "max_turns", message: "ran out" } }
        : undefined;
    });
    const { summary } = await runIsolated(2, executor, 1);
    expect(summary.states.map((item) => item.status)).toEqual(["failed", "succeeded"]);
    expect(seen[1]).not.toBe(seen[0]);
    expect(await readFile(join(project, "src", "f1.txt"), "utf8")).toBe("file 1 edited by attempt 1\n");
    expect(await readdir(join(state, "b1", "workspaces"))).toEqual([]);
  });

  it("R-B2: the copies a killed run left are swept when the batch is opened again", async () => {
    await seed(2);
    const batchDir = join(state, "b1");
    const isolation = await openWorkspaceIsolation({ cwd: project, batchDir });
    // A run that stopped without finishing: its copies are still there, one of them dirty.
    const killed = isolateItems(isolation, batchDir);
    const claim = (id: string): Claim => ({ item: { id, label: id, prompt: "p" }, attempt: 1 });
    const first = await killed.prepare(claim("i0"));
    const second = await killed.prepare(claim("i1"));
    await writeFile(join(first.workspace!, "left.txt"), "x\n");
    // Killed while git was adding it: git keeps it locked, and a prune alone never forgets it.
    gitIn(project, "worktree", "lock", second.workspace!);
    expect(await readdir(join(batchDir, "workspaces"))).toHaveLength(2);
    expect(gitIn(project, "worktree", "list").trim().split("\n")).toHaveLength(3);
    await isolateItems(await openWorkspaceIsolation({ cwd: project, batchDir }), batchDir).begin([]);
    expect(await readdir(join(batchDir, "workspaces"))).toEqual([]);
    expect(gitIn(project, "worktree", "list").trim().split("\n")).toHaveLength(1);
  });

  it("R-B4: the ref a rebased (--retry-conflicts) base is held by is deleted once every item is settled (control: a run that leaves items pending keeps it); a finished batch's resume sweeps one left behind", async () => {
    await seed(3);
    const batchDir = join(state, "b1");
    await mkdir(batchDir, { recursive: true });
    const refs = () => gitIn(project, "for-each-ref", "--format=%(refname)", "refs/forkloop").trim();
    const backend = await openLocalJournalBackend({ dir: batchDir });
    await backend.enqueue(items(3));
    const rebased = await (await openWorkspaceIsolation({ cwd: project, batchDir })).rebase();
    expect(refs()).toBe("refs/forkloop/batch-bases/b1");
    const run = (signal?: AbortSignal) =>
      runBatch({
        backend,
        executor: editingExecutor(editItem),
        concurrency: 2,
        warm: false,
        isolation: isolateItems(rebased, batchDir),
        ...(signal === undefined ? {} : { signal }),
      });
    try {
      // Control: stopped before its items ran, so a resume still makes copies from the base.
      expect((await run(AbortSignal.abort())).interrupted).toBe(true);
      expect(refs()).toBe("refs/forkloop/batch-bases/b1");
      const summary = await run();
      expect(summary.states.map((item) => item.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
      expect(refs()).toBe("");
    } finally {
      await backend.close();
    }
    // A run killed after its last settle, before it deleted the ref: the finished batch's resume does.
    const again = await (await openWorkspaceIsolation({ cwd: project, batchDir })).rebase();
    expect(refs()).toBe("refs/forkloop/batch-bases/b1");
    await dropSettledBase(batchDir);
    expect(refs()).toBe("");
    expect(again.base).toBeDefined();
  });
});

describe("R-B2, R-F4: an isolated batch's warm-up, on the worker pool and the simulator", () => {
  it("R-R9, R-B2: a warm-up item that fails as every item would (a refused key) stops the batch before any other item starts; all stay claimed for a resume, their copies removed", async () => {
    const { batchDir, backend, isolation } = await openBatch(3);
    let made = 0;
    let allMade: () => void = () => {};
    const copies = new Promise<void>((resolve) => {
      allMade = resolve;
    });
    const counted = {
      ...isolation,
      async create(key: string) {
        const copy = await isolation.create(key);
        if (++made === 3) allMade();
        return copy;
      },
    };
    const started: string[] = [];
    const executor = editingExecutor(async (claim) => {
      started.push(claim.item.id);
      // It fails once every copy is made: the others are ready to start and must not.
      await Promise.race([copies, sleep(10_000)]);
      return { ok: false, error: { code: "authentication_error", message: "invalid x-api-key" } };
    });
    try {
      const summary = await runBatch({
        backend,
        executor,
        concurrency: 3,
        isolation: isolateItems(counted, batchDir),
        stopOnFailure: (error) => (error.code === "authentication_error" ? "the key was refused" : undefined),
      });
      expect(summary.stopped).toBe("the key was refused");
      expect(summary.states.map((item) => item.status)).toEqual(["running", "running", "running"]);
    } finally {
      await backend.close();
    }
    expect(started).toHaveLength(1);
    expect(await readdir(join(batchDir, "workspaces"))).toEqual([]);
    expect(gitIn(project, "worktree", "list").trim().split("\n")).toHaveLength(1);
  });

  /** A promise and the function that resolves it. */
  const gate = () => {
    let open: () => void = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { opened, open };
  };

  it("R-B2, R-F4: with warm (the CLI's default) the first item starts once its own copy is made and the others once its response has started — not when the wave's last copy is; they read its cache entry", async () => {
    const { batchDir, backend, isolation } = await openBatch(3);
    const events: string[] = [];
    const firstRequest = gate();
    const copiesMade = gate();
    let made = 0;
    let slowMade = 0;
    // The second and third copies are made only once the simulator has the first item's request:
    // a runner that waited for the whole wave would wait here until the fallback (no deadlock).
    const slowCopies = {
      ...isolation,
      async create(key: string) {
        // Counted when asked for, not when made: the wave asks for the first item's copy first,
        // and two copies are made side by side, so either may be made first.
        const slow = made++ >= 1;
        const copy = await isolation.create(key);
        if (slow) {
          await Promise.race([firstRequest.opened, sleep(10_000)]);
          events.push("copy made");
          if (++slowMade === 2) copiesMade.open();
        }
        return copy;
      },
    };
    const sim = await startSimulator({
      brain: async (request) => {
        const item = /edit (\d+)/.exec(request.lastUserText ?? "")?.[1];
        events.push(`request i${item}`);
        if (events.filter((event) => event.startsWith("request")).length === 1) {
          firstRequest.open();
          // The warm-up's response starts after both other copies exist, and a moment later: an
          // item released before it (not waiting for the warm-up) would send in that moment.
          await Promise.race([copiesMade.opened, sleep(10_000)]);
          await sleep(300);
          events.push(`response i${item}`);
        }
        return { content: [{ type: "text", text: `item ${item} done` }] };
      },
    });
    const pool = createAgentPool({
      endpoint: { apiKey: "test-key", baseURL: sim.url },
      maxThreads: 1,
      concurrentTasksPerWorker: 4,
    });
    try {
      const executor = createPoolExecutor(pool, {
        cwd: project,
        cacheSafeParams: testCacheSafeParams({ tools: [] }),
        toolNames: [],
        profile: testProfile(),
      });
      const summary = await runBatch({
        backend,
        executor,
        concurrency: 3,
        isolation: isolateItems(slowCopies, batchDir),
      });
      expect(summary.states.map((item) => item.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
      const messages = sim.requests().filter((record) => record.path === "/v1/messages");
      // One write and two reads: the others waited for the warm-up's response.
      const reads = messages.map((record) => record.usage?.cache_read_input_tokens ?? 0);
      expect(reads.filter((tokens) => tokens === 0)).toHaveLength(1);
      expect(reads.filter((tokens) => tokens > 0)).toHaveLength(2);
    } finally {
      await pool.close();
      await sim.close();
      await backend.close();
    }
    const warmUp = /^request (i\d)$/.exec(events[0] ?? "")?.[1];
    expect(events.slice(0, 4)).toEqual([`request ${warmUp}`, "copy made", "copy made", `response ${warmUp}`]);
    expect(events.slice(4).sort()).toEqual(
      ["i0", "i1", "i2"].filter((id) => id !== warmUp).map((id) => `request ${id}`),
    );
  });
});
