// One run of test/chaos/batch-apply-kill.test.ts (R-B3): an isolated batch over the project in
// argv[2], state in argv[3], from the BUILT packages, with an executor that really edits each
// item's worktree. The parent kill -9s it at random moments and runs it again until it finishes.
// argv[5] "slow": the run's completion records wait (a slow disk), so a kill aimed just after an
// item's apply lands before its record; other runs settle at full speed.
// Item n appends "edited by item n, attempt k" to src/f<n>.txt and fills its slot of shared.txt;
// items 0 and 1 also claim the same line of overlap.txt (one of them is a conflict); every item
// with n % 10 == 7 edits and then fails (its edits must never reach the tree). Settling is slowed
// in a "slow" run (a slow disk), so kills land between an item's apply and its completion record.
// "group": completion records are slow too (items settle while the apply lock is held, so the
// next turn applies several together), and the run kill -9s itself at the first completion record
// after a group's record — its plan carried out, none of its members recorded. "group-unrecorded"
// (the control): the same, with the group's journal record never written.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isolateItems, openLocalJournalBackend, openWorkspaceIsolation, runBatch } from "@forkloop/batch";
import { itemResult } from "@forkloop/batch/testing";

const [project, batchDir, countText, pace] = process.argv.slice(2);
const count = Number(countText);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function edit(claim) {
  const n = Number(claim.item.id.slice(1));
  const dir = claim.workspace;
  await sleep(10 + Math.random() * 60);
  const file = join(dir, "src", `f${n}.txt`);
  await writeFile(file, `${await readFile(file, "utf8")}edited by item ${n}, attempt ${claim.attempt}\n`);
  const shared = join(dir, "shared.txt");
  await writeFile(
    shared,
    (await readFile(shared, "utf8")).replace(`slot ${n}: empty`, `slot ${n}: item ${n}`),
  );
  if (n < 2) await writeFile(join(dir, "overlap.txt"), `owner: item ${n}\n`);
  await sleep(Math.random() * 30);
  if (n % 10 === 7)
    return { ok: false, error: { code: "max_turns", message: "gave up" }, result: itemResult("no") };
  return { ok: true, result: itemResult(`item ${n} done`) };
}

const executor = {
  startAll: (claims) => claims.map((claim) => ({ result: edit(claim), cancel() {} })),
};

const backend = await openLocalJournalBackend({ dir: batchDir, batchId: "apply-chaos" });
// Said first, so a run killed later still reports what it found to finish.
process.stdout.write(`${JSON.stringify({ recovered: (await backend.pendingApplies()).length })}\n`);
// A slow disk: the completion record waits, so a kill often lands after the apply and before it.
let grouped = false;
const slowed = new Proxy(backend, {
  get(target, property) {
    const value = target[property];
    // Says when an item's completion record is about to be written — after its change is in the
    // tree — so the parent can aim a kill between the two (whatever the journal recorded before).
    if (property === "complete")
      return async (...args) => {
        if (grouped) process.kill(process.pid, "SIGKILL");
        process.stdout.write("settling\n");
        if (pace !== "fast") await sleep(150);
        return value.apply(target, args);
      };
    if (property === "recordApplyingGroup" && pace.startsWith("group"))
      return async (...args) => {
        if (pace === "group") await value.apply(target, args);
        process.stdout.write(`group ${args[0].map((member) => member.claim.item.id).join(" ")}\n`);
        grouped = true;
      };
    return typeof value === "function" ? value.bind(target) : value;
  },
});
await backend.enqueue(
  Array.from({ length: count }, (_, n) => ({ id: `i${n}`, label: `f${n}`, prompt: `edit ${n}` })),
);
const isolation = await openWorkspaceIsolation({ cwd: project, batchDir });
const summary = await runBatch({
  backend: slowed,
  executor,
  concurrency: 6,
  warm: false,
  isolation: isolateItems(isolation, batchDir),
});
await backend.close();
process.stdout.write(`${JSON.stringify({ statuses: summary.states.map((state) => state.status) })}\n`);
