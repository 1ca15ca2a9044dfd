import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readJournal } from "@forkloop/batch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seeded } from "./seeded.js";

/**
 * R-B3, R-B4 chaos: an isolated batch of 100 editing items (real git worktrees, real files) is
 * kill -9'd 20 times at seeded random moments and resumed each time. It must end with the tree a
 * clean run ends with — every succeeded item's edit applied exactly once (the attempt the journal
 * completed), the shared file's slots all merged, the overlapping pair one applied and one
 * conflict, the failing items' edits nowhere — with no worktree, copy or plan left behind.
 *
 * Mutation-checked by hand (each turned this test red, then was reverted): applying without the
 * lock (the shared file lost slots), applying a failed item's change (its edits reached the tree),
 * and skipping the `applying` journal record (an item killed between its apply and its completion
 * ran again on resume: its second attempt's line conflicted with its first).
 */
const ITEMS = 100;
const KILLS = 20;
const racer = fileURLToPath(new URL("./apply-racer.mjs", import.meta.url));

let root: string;
beforeAll(async () => {
  // In memory where the machine has it: fsync there costs nothing, and a kill -9 (not a power
  // cut) is the subject — the page cache outlives the process either way.
  const scratch = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  root = await realpath(await mkdtemp(join(scratch, "forkloop-apply-chaos-")));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" });

async function makeProject(name: string, items = ITEMS): Promise<{ project: string; state: string }> {
  const project = join(root, name, "project");
  const state = join(root, name, "state");
  await mkdir(join(project, "src"), { recursive: true });
  await mkdir(state, { recursive: true });
  for (let n = 0; n < items; n++) await writeFile(join(project, "src", `f${n}.txt`), `file ${n}\n`);
  await writeFile(
    join(project, "shared.txt"),
    Array.from({ length: items }, (_, n) => `slot ${n}: empty\n--\n`).join(""),
  );
  await writeFile(join(project, "overlap.txt"), "owner: none\n");
  git(project, "init", "-q");
  git(project, "add", "-A");
  git(project, "commit", "-qm", "base");
  return { project, state };
}

function start(
  project: string,
  state: string,
  pace: "slow" | "fast" | "group" | "group-unrecorded" = "fast",
  items = ITEMS,
): {
  child: ChildProcess;
  /** Resolves once the run has said what it recovered and `settles` of its items reached their records. */
  settled: (settles: number) => Promise<void>;
  done: Promise<{ code: number | null; out: string; err: string }>;
} {
  const child = spawn(process.execPath, [racer, project, state, String(items), pace], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const waiting: { settles: number; resolve: () => void }[] = [];
  const progress = () => {
    if (!out.includes("\n")) return;
    const settles = out.split("settling\n").length - 1;
    for (const waiter of waiting.filter((entry) => entry.settles <= settles)) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  const settled = (settles: number) =>
    new Promise<void>((resolve) => {
      waiting.push({ settles, resolve });
      progress();
    });
  child.stdout!.on("data", (chunk) => {
    out += chunk;
    progress();
  });
  child.stderr!.on("data", (chunk) => (err += chunk));
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, out, err })),
  );
  return { child, settled, done };
}

/** The applies a run found cut short and finished (its first line says), 0 if killed before it. */
function recoveredIn(out: string): number {
  const first = out.split("\n")[0];
  return first ? (JSON.parse(first) as { recovered: number }).recovered : 0;
}

/** The tracked tree's files and contents, with each line's attempt number taken out. */
async function tree(project: string): Promise<Record<string, string>> {
  const files = git(project, "ls-files", "-co", "--exclude-standard").trim().split("\n");
  const entries = await Promise.all(
    files.map(
      async (file) =>
        [file, (await readFile(join(project, file), "utf8")).replace(/, attempt \d+/g, "")] as const,
    ),
  );
  return Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));
}

describe("R-B3 chaos: kill -9 during isolated applies, then resume", () => {
  it(`${KILLS} random kill -9s of an isolated ${ITEMS}-item editing batch end in the clean run's tree, every edit applied once`, async () => {
    // The clean run goes on beside the chaos (its own project and state): the two share nothing
    // but the machine, and the test takes the longer of them instead of their sum.
    const clean = await makeProject("clean");
    const began = Date.now();
    const cleanRunning = start(clean.project, clean.state).done.then((run) => {
      console.info(`apply chaos: the clean run took ${Date.now() - began} ms`);
      return run;
    });

    const chaos = await makeProject("chaos");
    const random = seeded(3131);
    let killed = 0;
    let recovered = 0;
    for (let cycle = 0; killed < KILLS && cycle < 3 * KILLS; cycle++) {
      // Every other kill is aimed: just after an item's change is in the tree, before its
      // completion record (a slow disk); the rest land anywhere in the run's work — its sweep and
      // recovery, its items' edits, their applies — after up to 7 of its items settled.
      const aimed = cycle % 2 === 1;
      const run = start(chaos.project, chaos.state, aimed ? "slow" : "fast");
      const [settles, delayMs] = aimed ? [1, random() * 120] : [Math.floor(random() * 8), random() * 250];
      const outcome = await Promise.race([
        run.settled(settles).then(() => new Promise((resolve) => setTimeout(() => resolve("kill"), delayMs))),
        run.done.then(() => "exited"),
      ]);
      if (outcome === "kill") {
        run.child.kill("SIGKILL");
        killed++;
      }
      const exited = await run.done;
      recovered += recoveredIn(exited.out);
      if (exited.code !== 0) expect(exited.code, exited.err).toBeNull(); // killed: no exit code, no crash of its own
      if (outcome === "exited") {
        // It finished: reset to an unfinished state is not possible, so the rest of the kills are moot.
        break;
      }
    }
    const last = await start(chaos.project, chaos.state).done;
    expect(last.code, last.err).toBe(0);
    recovered += recoveredIn(last.out);
    expect(killed).toBeGreaterThan(0);

    const cleanRun = await cleanRunning;
    expect(cleanRun.code, cleanRun.err).toBe(0);
    // The same tree as the clean run (attempt numbers aside).
    const [cleanTree, chaosTree] = [await tree(clean.project), await tree(chaos.project)];
    const winner = (files: Record<string, string>) => files["overlap.txt"];
    expect(["owner: item 0\n", "owner: item 1\n"]).toContain(winner(chaosTree));
    // Which of the overlapping pair wins is the order they settle in: compare the rest as is,
    // and the pair by who won.
    const loser = winner(chaosTree) === "owner: item 0\n" ? 1 : 0;
    const withoutPair = (files: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(files)
          .filter(([file]) => !["overlap.txt", "src/f0.txt", "src/f1.txt", "shared.txt"].includes(file))
          .map(([file, text]) => [file, text]),
      );
    expect(withoutPair(chaosTree)).toEqual(withoutPair(cleanTree));
    expect(chaosTree[`src/f${loser}.txt`]).toBe(`file ${loser}\n`);
    expect(chaosTree[`src/f${1 - loser}.txt`]).toBe(`file ${1 - loser}\nedited by item ${1 - loser}\n`);
    const slots = (text: string) => text.split("\n").filter((line) => line.startsWith("slot "));
    const expectedSlots = Array.from({ length: ITEMS }, (_, n) =>
      n % 10 === 7 || n === loser ? `slot ${n}: empty` : `slot ${n}: item ${n}`,
    );
    expect(slots(chaosTree["shared.txt"]!)).toEqual(expectedSlots);

    // Every succeeded item's line is there once, from the attempt the journal completed.
    const { records } = await readJournal(chaos.state);
    const completed = records.filter((record) => record.type === "completed");
    expect(new Set(completed.map((record) => record.id)).size).toBe(completed.length);
    for (const record of completed) {
      const n = Number(record.id.slice(1));
      const text = await readFile(join(chaos.project, "src", `f${n}.txt`), "utf8");
      expect(text).toBe(`file ${n}\nedited by item ${n}, attempt ${record.attempt}\n`);
    }
    const settledIds = new Set(
      records
        .filter((record) => record.type === "completed" || record.type === "failed")
        .map((record) => record.id),
    );
    const unsettled = Array.from({ length: ITEMS }, (_, n) => `i${n}`).filter((id) => !settledIds.has(id));
    const story = unsettled.map((id) =>
      records
        .filter((record) => record.type !== "enqueued" && "id" in record && record.id === id)
        .map((record) => `${record.type}${"attempt" in record ? record.attempt : ""}`)
        .join(" "),
    );
    expect(unsettled, `${story.join("; ")} — last run: ${last.out}`).toEqual([]);
    const failures = records
      .filter((record) => record.type === "failed")
      .map((record) =>
        record.type === "failed" ? `${record.id}#${record.attempt}: ${record.error.message}` : "",
      );
    const failing = ITEMS / 10; // items n % 10 == 7
    expect(completed, failures.join("\n")).toHaveLength(ITEMS - failing - 1);
    const failed = records.filter((record) => record.type === "failed");
    expect(failed.map((record) => (record.type === "failed" ? record.error.code : "")).sort()).toEqual([
      "conflict",
      ...Array.from({ length: failing }, () => "max_turns"),
    ]);
    // Nothing left behind: no plan, only the conflict's worktree (kept and listed).
    expect(await readdir(join(chaos.state, "applies")).catch(() => [])).toEqual([]);
    // The conflict's worktree is kept until a later resume sweeps it (it stays listed in results).
    const kept = await readdir(join(chaos.state, "workspaces"));
    expect(kept.length).toBeLessThanOrEqual(1);
    expect(git(chaos.project, "worktree", "list").trim().split("\n")).toHaveLength(1 + kept.length);
    // Said for the record: how many applies a kill cut and a resume finished from their plans.
    console.info(`apply chaos: ${killed} kills, ${recovered} applies finished from their plans on resume`);
    expect(recovered).toBeGreaterThan(0);
  }, 600_000);
});

describe("R-B3: a group apply cut by kill -9, then resume", () => {
  const items = 12;
  /** One run that kill -9s itself after a group's plan is carried out, before any member's record; then a resume. */
  const cutGroup = async (name: string, pace: "group" | "group-unrecorded") => {
    const { project, state } = await makeProject(name, items);
    const killed = await start(project, state, pace, items).done;
    const members = (/^group (.+)$/m.exec(killed.out)?.[1] ?? "").split(" ").filter(Boolean);
    const edited = await Promise.all(
      members.map((id) => readFile(join(project, "src", `f${id.slice(1)}.txt`), "utf8")),
    );
    const resumed = await start(project, state, "fast", items).done;
    const { records } = await readJournal(state);
    const claims = (id: string) => records.filter((record) => record.type === "claimed" && record.id === id);
    return { project, state, killed, members, edited, resumed, records, claims };
  };

  it("R-B3: items applied together from one plan and one journal record, killed before any of their records, are each applied once on resume and never run again", async () => {
    const run = await cutGroup("group", "group");
    expect(run.killed.code, run.killed.err).toBeNull(); // SIGKILL'd mid-group, not a crash
    expect(run.members.length, run.killed.out).toBeGreaterThanOrEqual(2);
    // The kill came after the group's plan was carried out: its edits were in the tree.
    for (const [index, id] of run.members.entries())
      expect(run.edited[index]).toBe(`file ${id.slice(1)}\nedited by item ${id.slice(1)}, attempt 1\n`);
    expect(run.resumed.code, run.resumed.err).toBe(0);
    expect(recoveredIn(run.resumed.out)).toBe(run.members.length);
    for (const id of run.members) {
      expect(run.claims(id), id).toHaveLength(1);
      const n = Number(id.slice(1));
      expect(await readFile(join(run.project, "src", `f${n}.txt`), "utf8")).toBe(
        `file ${n}\nedited by item ${n}, attempt 1\n`,
      );
    }
    // Nothing lost: every item settled, each succeeded item's edit there once.
    const settled = run.records.filter((record) => record.type === "completed" || record.type === "failed");
    expect(new Set(settled.map((record) => record.id)).size).toBe(items);
    expect(settled).toHaveLength(items);
    const owner = await readFile(join(run.project, "overlap.txt"), "utf8");
    const loser = owner === "owner: item 0\n" ? 1 : 0;
    expect(owner).toBe(`owner: item ${1 - loser}\n`);
    const shared = (await readFile(join(run.project, "shared.txt"), "utf8"))
      .split("\n")
      .filter((line) => line.startsWith("slot "));
    expect(shared).toEqual(
      Array.from({ length: items }, (_, n) =>
        n % 10 === 7 || n === loser ? `slot ${n}: empty` : `slot ${n}: item ${n}`,
      ),
    );
    for (const record of run.records)
      if (record.type === "completed") {
        const n = Number(record.id.slice(1));
        expect(await readFile(join(run.project, "src", `f${n}.txt`), "utf8")).toBe(
          `file ${n}\nedited by item ${n}, attempt ${record.attempt}\n`,
        );
      }
    expect(await readdir(join(run.state, "applies")).catch(() => [])).toEqual([]);
  }, 120_000);

  it("R-B3 control: the same group applied without its journal record is run again on resume, and its members' second edits conflict with their first", async () => {
    const run = await cutGroup("group-control", "group-unrecorded");
    expect(run.killed.code, run.killed.err).toBeNull();
    expect(run.members.length, run.killed.out).toBeGreaterThanOrEqual(2);
    expect(run.resumed.code, run.resumed.err).toBe(0);
    expect(recoveredIn(run.resumed.out)).toBe(0);
    // Nothing tells the resume their changes are in the tree: each runs again, and conflicts.
    for (const id of run.members) expect(run.claims(id), id).toHaveLength(2);
    const conflicts = run.records.filter(
      (record) =>
        record.type === "failed" && record.error.code === "conflict" && run.members.includes(record.id),
    );
    expect(conflicts).toHaveLength(run.members.length);
  }, 120_000);
});
