/**
 * R-B2, R-B3: what isolating batch items costs, on a 5,000-file project.
 *   1. One item's copy — made, its changes read, removed — as a git worktree (a repository), as
 *      `cp -a --reflink=auto` (outside git; a plain copy on ext4, copy-on-write on btrfs/xfs) and as
 *      Node's fs.cp (the copy forkloop did not choose): median of 5 each; disk used by one copy.
 *      And a used worktree put back to the base (the pool a batch run reuses its copies from):
 *      median of 5 item-sized edits read and reset.
 *   2. An editing batch of 500 items (each waits 1 s, as a model turn would, then edits its own file
 *      and its slot of a shared file) at concurrency 16, in place vs isolated in worktrees: wall
 *      time side by side, and the apply step's time per item (merge, plan, journal, write). Run as
 *      `forkloop batch` runs it: warm (R-F4, the CLI's default; the first item's response starts
 *      as its turn begins, which releases the others) and copies placed by the pool's room (in
 *      memory where the temp directory is a tmpfs, else in the batch's directory; said in notes).
 *      FORKLOOP_BENCH_ISOLATION_ITEMS sets a smaller batch for a check on a busy machine (its
 *      figures are not the goal's).
 */
import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Claim,
  type ItemExecutor,
  type ItemIsolator,
  type ItemOutcome,
  isolateItems,
  openLocalJournalBackend,
  openWorkspaceIsolation,
  runBatch,
} from "@forkloop/batch";
import { itemResult } from "@forkloop/batch/testing";
import { type BenchResult, compare, percentile } from "./harness.js";

const FILES = 5_000;
const ITEMS = Number(process.env.FORKLOOP_BENCH_ISOLATION_ITEMS ?? 500);
const CONCURRENCY = 16;
const TURN_MS = 1_000;

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=b@b", "-c", "user.name=b", ...args], { cwd, encoding: "utf8" });

async function makeTree(dir: string, repo: boolean): Promise<void> {
  for (let d = 0; d < FILES / 100; d++) {
    await mkdir(join(dir, "src", `d${d}`), { recursive: true });
    for (let f = 0; f < 100; f++)
      await writeFile(join(dir, "src", `d${d}`, `f${f}.ts`), `export const v${f} = ${f}; // ${d}\n`);
  }
  await writeFile(
    join(dir, "shared.txt"),
    Array.from({ length: ITEMS }, (_, n) => `slot ${n}: empty\n--\n`).join(""),
  );
  if (repo) {
    git(dir, "init", "-q");
    git(dir, "add", "-A");
    git(dir, "commit", "-qm", "base");
  }
}

const median = (samples: readonly number[]) => percentile(samples, 50);

async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

function editingExecutor(project: string): ItemExecutor {
  const edit = async (claim: Claim): Promise<ItemOutcome> => {
    await new Promise((resolve) => setTimeout(resolve, TURN_MS));
    const n = Number(claim.item.id.slice(1));
    const dir = claim.workspace ?? project;
    // Its own file: 50 directories of 100 files hold 5,000 distinct (directory, file) pairs.
    const file = join(dir, "src", `d${n % 50}`, `f${Math.floor(n / 50)}.ts`);
    await writeFile(file, `${await readFile(file, "utf8")}// edited by item ${n}\n`);
    const shared = join(dir, "shared.txt");
    // In place, items share one file: read-modify-write races are the unsafety isolation removes.
    await writeFile(
      shared,
      (await readFile(shared, "utf8")).replace(`slot ${n}: empty`, `slot ${n}: item ${n}`),
    );
    return { ok: true, result: { ...itemResult(), durationMs: TURN_MS } };
  };
  // The turn's response starts as it begins (the model here has no time to a first token), so a
  // warm-up item (R-F4) releases the others at once.
  return {
    startAll: (claims) =>
      claims.map((claim) => ({ result: edit(claim), cancel() {}, responseStarted: Promise.resolve() })),
  };
}

async function editingBatch(
  root: string,
  isolated: boolean,
): Promise<{ wallMs: number; applyMs: number[]; copiesAt: string }> {
  const project = join(root, isolated ? "isolated" : "in-place");
  const batchDir = join(root, isolated ? "isolated-state" : "in-place-state");
  await mkdir(project, { recursive: true });
  await mkdir(batchDir, { recursive: true });
  await makeTree(project, true);
  const backend = await openLocalJournalBackend({ dir: batchDir });
  await backend.enqueue(
    Array.from({ length: ITEMS }, (_, n) => ({ id: `i${n}`, label: `i${n}`, prompt: "edit" })),
  );
  const applyMs: number[] = [];
  let isolation: ItemIsolator | undefined;
  let copiesAt = "";
  if (isolated) {
    // As `forkloop batch` opens it: copies placed by the pool's room (in memory where the temp
    // directory is a tmpfs, else in the batch's directory).
    const opened = await openWorkspaceIsolation({ cwd: project, batchDir, copies: { pool: CONCURRENCY } });
    copiesAt = opened.copiesAt;
    const inner = isolateItems(opened, batchDir);
    isolation = {
      ...inner,
      settle: async (claim, outcome, journal, record) => {
        const started = performance.now();
        const settled = await inner.settle(claim, outcome, journal, record);
        applyMs.push(performance.now() - started);
        return settled;
      },
    };
  }
  const started = performance.now();
  await runBatch({
    backend,
    executor: editingExecutor(project),
    concurrency: CONCURRENCY,
    warm: true, // the CLI's default (--no-warm turns it off)
    ...(isolation === undefined ? {} : { isolation }),
  });
  const wallMs = performance.now() - started;
  await backend.close();
  return { wallMs, applyMs, copiesAt };
}

export async function run(): Promise<BenchResult[]> {
  const root = await mkdtemp(join(tmpdir(), "forkloop-bench-isolation-"));
  try {
    const repo = join(root, "repo");
    const plain = join(root, "plain");
    await mkdir(repo);
    await mkdir(plain);
    await makeTree(repo, true);
    await makeTree(plain, false);
    await mkdir(join(root, "wt-state"));
    await mkdir(join(root, "cp-state"));
    const worktrees = await openWorkspaceIsolation({ cwd: repo, batchDir: join(root, "wt-state") });
    const copies = await openWorkspaceIsolation({
      cwd: plain,
      batchDir: join(root, "cp-state"),
      mode: "copy",
    });
    const cycle = async (isolation: typeof worktrees, key: string) => {
      const workspace = await isolation.create(key);
      await workspace.changes();
      await workspace.remove();
    };
    const worktreeMs: number[] = [];
    const copyMs: number[] = [];
    const nodeCopyMs: number[] = [];
    for (let index = 0; index < 5; index++) {
      worktreeMs.push(await timeIt(() => cycle(worktrees, `w${index}`)));
      copyMs.push(await timeIt(() => cycle(copies, `c${index}`)));
      const target = join(root, `node-copy-${index}`);
      nodeCopyMs.push(
        await timeIt(async () => {
          await cp(plain, target, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
          await rm(target, { recursive: true, force: true });
        }),
      );
    }
    const resetMs: number[] = [];
    const reused = await worktrees.create("reused");
    for (let index = 0; index < 5; index++) {
      const file = join(reused.dir, "src", `d${index}`, "f1.ts");
      await writeFile(file, `${await readFile(file, "utf8")}// edited\n`);
      await writeFile(join(reused.dir, `new-${index}.ts`), "new\n");
      resetMs.push(
        await timeIt(async () => {
          await reused.changes();
          await reused.reset();
        }),
      );
    }
    await reused.remove();
    const live = await worktrees.create("disk");
    const kib = Number(execFileSync("du", ["-sk", live.root], { encoding: "utf8" }).split("\t")[0]);
    await live.remove();

    const inPlace = await editingBatch(root, false);
    const isolated = await editingBatch(root, true);
    const notes = `${FILES} files, ${ITEMS} items, concurrency ${CONCURRENCY}, ${TURN_MS} ms per item's turn`;
    return [
      compare(
        "batch isolation: one item's copy (make, read changes, remove), 5,000 files — cp -a vs git worktree",
        "median ms (lower is better)",
        "ms",
        { label: "git worktree", value: median(worktreeMs) },
        { label: "cp -a --reflink=auto", value: median(copyMs) },
        "copy mode is what a project outside git gets; a repository gets worktrees",
      ),
      compare(
        "batch isolation: a copy for the next item, 5,000 files — a used worktree reset vs a new one",
        "median ms (lower is better)",
        "ms",
        { label: "new git worktree", value: median(worktreeMs) },
        { label: "reset worktree", value: median(resetMs) },
        "both read the item's changes; the new one's figure includes removing it, the reset's puts back the paths the item changed and confirms with one git status (git checkout --force + git clean -ffdx when it cannot)",
      ),
      compare(
        "batch isolation: copying 5,000 files — Node fs.cp vs cp -a --reflink=auto (the choice for copy mode)",
        "median ms (lower is better)",
        "ms",
        { label: "cp -a --reflink=auto", value: median(copyMs) },
        { label: "Node fs.cp", value: median(nodeCopyMs) },
        "cp's figure includes reading the changes and removing the copy; fs.cp's only copying and removing",
      ),
      {
        name: "batch isolation: disk used by one live item's worktree (5,000 files)",
        metric: "KiB",
        value: kib,
        unit: "KiB",
      },
      compare(
        `batch isolation: ${ITEMS}-item editing batch wall time — isolated (a pool of worktrees) vs in place`,
        "wall ms (lower is better; goal ≤ 1.2×)",
        "ms",
        { label: "in place", value: inPlace.wallMs },
        { label: "isolated", value: isolated.wallMs },
        `${notes}; item copies in ${isolated.copiesAt}`,
      ),
      {
        name: "batch isolation: apply step per item (changes read, merged, plan and journal, files written, recorded)",
        metric: "median ms (p90 in notes)",
        value: median(isolated.applyMs),
        unit: "ms",
        notes: `p90 ${percentile(isolated.applyMs, 90).toFixed(1)} ms over ${isolated.applyMs.length} items`,
      },
    ];
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
