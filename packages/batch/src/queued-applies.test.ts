import { execFileSync } from "node:child_process";
import { appendFile, mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FileChange, openWorkspaceIsolation } from "@forkloop/tools/workspace";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encodeRecord, readLog } from "./append-log.js";
import type { ItemState } from "./job-backend.js";
import { APPLIES_LOG, openQueuedApplier } from "./queued-applies.js";
import { encodeChanges } from "./queued-change.js";
import { itemResult } from "./testing/index.js";

/**
 * R-B1, R-B3: an isolated queued batch's producer applies each change a worker returned once,
 * in a real git repository: a producer cut between writing the change and recording it finishes
 * the plan when it re-attaches and never applies it again; an overlapping change is a conflict.
 */
let root: string;
let repo: string;
let batchDir: string;
const git = (...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], {
    cwd: repo,
    encoding: "utf8",
  });

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-queued-applies-")));
  repo = join(root, "repo");
  batchDir = join(root, "batch");
  await mkdir(repo);
  await writeFile(join(repo, "a.txt"), "a\n");
  await writeFile(join(repo, "b.txt"), "b\n");
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "base");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const succeeded = (id: string): ItemState => ({
  item: { id, label: id, prompt: "edit" },
  status: "succeeded",
  attempts: 1,
  result: itemResult(),
});
const change = (path: string, before: string, after: string): FileChange => ({
  path,
  before: Buffer.from(before),
  after: Buffer.from(after),
  mode: 0o644,
});

async function applier(changes: Record<string, readonly FileChange[]>) {
  const isolation = await openWorkspaceIsolation({
    cwd: repo,
    batchDir,
    commit: git("rev-parse", "HEAD").trim(),
  });
  return openQueuedApplier({
    dir: batchDir,
    isolation,
    readChange: async (id) => (changes[id] === undefined ? null : encodeChanges(changes[id]!)),
  });
}

/** An applier whose changes are all read before any is applied: the two settle in one lock turn. */
async function groupApplier(changes: Record<string, readonly FileChange[]>) {
  let asked = 0;
  let bothAsked: () => void = () => {};
  const together = new Promise<void>((resolve) => {
    bothAsked = resolve;
  });
  const isolation = await openWorkspaceIsolation({
    cwd: repo,
    batchDir,
    commit: git("rev-parse", "HEAD").trim(),
  });
  return openQueuedApplier({
    dir: batchDir,
    isolation,
    readChange: async (id) => {
      if (++asked === 2) bothAsked();
      await together;
      return encodeChanges(changes[id]!);
    },
  });
}

describe("R-B3: a queued batch's returned changes are applied once by the producer", () => {
  it("R-B3: a producer cut between the apply and its record finishes the plan on re-attach, and applies nothing twice", async () => {
    const changes = { i1: [change("a.txt", "a\n", "a by i1\n"), change("b.txt", "b\n", "b by i1\n")] };
    const first = await applier(changes);
    // The cut: b.txt's temporary name is taken by a directory, so the apply throws after a.txt —
    // as a kill -9 would stop it, its plan named in the journal and no settle record.
    await mkdir(join(repo, "b.txt.forkloop-apply"));
    await expect(first.settle(succeeded("i1"))).rejects.toThrow();
    await first.close();
    expect(await readFile(join(repo, "a.txt"), "utf8")).toBe("a by i1\n");
    expect(await readFile(join(repo, "b.txt"), "utf8")).toBe("b\n");
    await rm(join(repo, "b.txt.forkloop-apply"), { recursive: true });

    // Re-attached: the plan is finished before anything else, and the item settles from it.
    const second = await applier(changes);
    expect(await readFile(join(repo, "b.txt"), "utf8")).toBe("b by i1\n");
    const settled = await second.settle(succeeded("i1"));
    expect(settled.status).toBe("succeeded");
    expect(settled.result?.applied).toEqual(["a.txt", "b.txt"]);
    await second.close();
    const records = (await readLog(join(batchDir, APPLIES_LOG))).records as { type: string }[];
    expect(records.map((record) => record.type)).toEqual(["applying", "settled"]);

    // Once more (a third attach): nothing is applied again, even over a user's later edit.
    await writeFile(join(repo, "a.txt"), "the user's\n");
    const third = await applier(changes);
    expect((await third.settle(succeeded("i1"))).status).toBe("succeeded");
    await third.close();
    expect(await readFile(join(repo, "a.txt"), "utf8")).toBe("the user's\n");
    expect((await readLog(join(batchDir, APPLIES_LOG))).records).toHaveLength(2);
  });

  it("R-B3: changes settled together are applied in one lock turn from one plan and one journal record; a producer cut during it finishes the group's plan on re-attach — each member settled once, nothing applied twice", async () => {
    const changes = { i1: [change("a.txt", "a\n", "a by i1\n")], i2: [change("b.txt", "b\n", "b by i2\n")] };
    const first = await groupApplier(changes);
    // The cut, as in the single apply's case: b.txt cannot be written, so the group's apply throws
    // after a.txt, its plan named in the journal and no member's settle record.
    await mkdir(join(repo, "b.txt.forkloop-apply"));
    const cut = await Promise.allSettled([first.settle(succeeded("i1")), first.settle(succeeded("i2"))]);
    expect(cut.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
    await first.close();
    const journal = async () =>
      (await readLog(join(batchDir, APPLIES_LOG))).records as {
        type: string;
        members?: { item: { id: string } }[];
      }[];
    const [group] = await journal();
    expect(group?.type).toBe("applying_group");
    expect(group?.members?.map((member) => member.item.id)).toEqual(["i1", "i2"]);
    expect(await readFile(join(repo, "a.txt"), "utf8")).toBe("a by i1\n");
    expect(await readFile(join(repo, "b.txt"), "utf8")).toBe("b\n");
    await rm(join(repo, "b.txt.forkloop-apply"), { recursive: true });

    // Re-attached: the group's plan is finished once, and each member settles from it with its own paths.
    const second = await applier(changes);
    expect(await readFile(join(repo, "b.txt"), "utf8")).toBe("b by i2\n");
    const settled = await Promise.all([second.settle(succeeded("i1")), second.settle(succeeded("i2"))]);
    expect(settled.map((state) => [state.status, state.result?.applied])).toEqual([
      ["succeeded", ["a.txt"]],
      ["succeeded", ["b.txt"]],
    ]);
    await second.close();
    expect((await journal()).map((record) => record.type)).toEqual(["applying_group", "settled", "settled"]);
    expect(await readdir(join(batchDir, "applies"))).toEqual([]);

    // A third attach after the user's edits: nothing is applied again.
    await writeFile(join(repo, "a.txt"), "the user's a\n");
    await writeFile(join(repo, "b.txt"), "the user's b\n");
    const third = await applier(changes);
    await third.close();
    expect(await readFile(join(repo, "a.txt"), "utf8")).toBe("the user's a\n");
    expect(await readFile(join(repo, "b.txt"), "utf8")).toBe("the user's b\n");
    expect(await journal()).toHaveLength(3);
  });

  it("R-B3: a group whose first member's settle record was durable and another's was not: on re-attach the other finishes from the group's plan, and the plan goes with it (nothing left behind)", async () => {
    const changes = { i1: [change("a.txt", "a\n", "a by i1\n")], i2: [change("b.txt", "b\n", "b by i2\n")] };
    const first = await groupApplier(changes);
    await mkdir(join(repo, "b.txt.forkloop-apply"));
    await Promise.allSettled([first.settle(succeeded("i1")), first.settle(succeeded("i2"))]);
    await first.close();
    await rm(join(repo, "b.txt.forkloop-apply"), { recursive: true });
    // The stop came between the two settle records: the first member's (the plan's namesake) is durable.
    await appendFile(
      join(batchDir, APPLIES_LOG),
      encodeRecord({ type: "settled", id: "i1", outcome: { ok: true, result: itemResult() } }),
    );
    expect(await readdir(join(batchDir, "applies"))).toHaveLength(1);

    const second = await applier(changes);
    expect(await readFile(join(repo, "b.txt"), "utf8")).toBe("b by i2\n");
    expect((await second.settle(succeeded("i2"))).result?.applied).toEqual(["b.txt"]);
    await second.close();
    expect(await readdir(join(batchDir, "applies"))).toEqual([]);
  });

  it("R-B4: a returned change that overlaps one applied before is a conflict, its diff kept, the tree untouched", async () => {
    const open = await applier({
      i1: [change("a.txt", "a\n", "a by i1\n")],
      i2: [change("a.txt", "a\n", "a by i2\n")],
    });
    expect((await open.settle(succeeded("i1"))).status).toBe("succeeded");
    const conflict = await open.settle(succeeded("i2"));
    await open.close();
    expect(conflict.status).toBe("failed");
    expect(conflict.error?.code).toBe("conflict");
    expect(conflict.error?.message).not.toContain("--retry-conflicts");
    expect(await readFile(conflict.error!.conflict!.patch, "utf8")).toContain("+a by i2");
    expect(await readFile(join(repo, "a.txt"), "utf8")).toBe("a by i1\n");
  });

  it("R-B4: --retry-conflicts journals a round that supersedes the conflicts once; re-opened (a producer killed before the round's results came), the round stands and the item's new change is applied", async () => {
    const changes: Record<string, readonly FileChange[]> = {
      i1: [change("a.txt", "a\n", "a by i1\n")],
      i2: [change("a.txt", "a\n", "a by i2\n")],
    };
    const open = await applier(changes);
    expect((await open.settle(succeeded("i1"))).status).toBe("succeeded");
    expect((await open.settle(succeeded("i2"))).error?.code).toBe("conflict");
    const round = await open.retryConflicts();
    expect(round).toMatchObject({ round: 1, ids: ["i2"] });
    // The round's base is the tree as it is now: i1's change in it.
    expect(git("show", `${round!.base}:a.txt`)).toBe("a by i1\n");
    // Superseded once: the conflict is no conflict any more, so it is not taken again.
    expect(await open.retryConflicts()).toBeUndefined();
    await open.close();

    // i2 ran again from the round's base; its new change is applied once the producer is back.
    changes.i2 = [change("a.txt", "a by i1\n", "a by i1\nand by i2\n")];
    const again = await applier(changes);
    expect(again.lastRetry()).toEqual(round);
    const retried = await again.settle({ ...succeeded("i2"), attempts: 2 });
    expect(retried.status).toBe("succeeded");
    expect(retried.result?.applied).toEqual(["a.txt"]);
    expect(await readFile(join(repo, "a.txt"), "utf8")).toBe("a by i1\nand by i2\n");
    expect(await again.retryConflicts()).toBeUndefined();
    await again.close();
    const records = (await readLog(join(batchDir, APPLIES_LOG))).records as { type: string }[];
    expect(records.map((record) => record.type)).toEqual([
      "applying",
      "settled",
      "settled",
      "retry",
      "applying",
      "settled",
    ]);
  });
});
