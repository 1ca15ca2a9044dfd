import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ItemResult, JobItem } from "./job-backend.js";
import {
  journalRecordSchema,
  openLocalJournalBackend,
  readJournal,
  replayJournal,
} from "./local-journal-backend.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-journal-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const items: JobItem[] = ["a", "b", "c"].map((id) => ({
  id,
  label: `${id}.ts`,
  prompt: `Summarize ${id}.ts`,
}));
const result: ItemResult = {
  turns: 2,
  usage: {
    inputTokens: 10,
    outputTokens: 5,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 100,
    apiCalls: 2,
  },
  costUsd: 0.001,
  durationMs: 5,
  terminal: "completed",
  text: "ok",
};

describe("local journal backend", () => {
  it("claims in enqueue order and settles each item once", async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.enqueue(items);
    await backend.enqueue(items); // idempotent
    const first = await backend.claim("w");
    expect(first).toMatchObject({ item: { id: "a" }, attempt: 1 });
    expect(await backend.complete(first!, result)).toEqual({ ok: true });
    expect((await backend.complete(first!, result)).ok).toBe(false);
    expect((await backend.fail(first!, { code: "x", message: "y" })).ok).toBe(false);
    await backend.close();
    const { records } = await readJournal(dir);
    expect(records.filter((record) => record.type === "enqueued")).toHaveLength(3);
    expect(records.filter((record) => record.type === "completed")).toHaveLength(1);
  });

  it("resume: finished items are skipped, a claimed-but-unsettled item is redone under a new attempt", async () => {
    const first = await openLocalJournalBackend({ dir });
    await first.enqueue(items);
    const a = await first.claim("w");
    await first.complete(a!, result);
    const b = await first.claim("w");
    const c = await first.claim("w");
    await first.fail(c!, { code: "model_error", message: "boom" });
    expect(b).toMatchObject({ item: { id: "b" } });
    await first.close(); // as if killed: b never settled

    const second = await openLocalJournalBackend({ dir });
    expect(await second.interrupted()).toEqual(["b"]);
    const redo = await second.claim("w2");
    expect(redo).toMatchObject({ item: { id: "b" }, attempt: 2 });
    expect(await second.claim("w2")).toBeNull();
    // The stale attempt 1 can no longer settle it; attempt 2 can.
    expect((await second.complete(b!, result)).ok).toBe(false);
    expect(await second.complete(redo!, result)).toEqual({ ok: true });
    const states = await second.list();
    expect(states.map((state) => [state.item.id, state.status, state.attempts])).toEqual([
      ["a", "succeeded", 1],
      ["b", "succeeded", 2],
      ["c", "failed", 1],
    ]);
    await second.close();
  });

  it("replay ignores a second settle record (an item is never completed twice)", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const replay = replayJournal([
      { type: "enqueued", at, item: items[0]! },
      { type: "claimed", at, id: "a", attempt: 1, worker: "w", pid: 1 },
      { type: "completed", at, id: "a", attempt: 1, result: { ...result, text: "first" } },
      { type: "completed", at, id: "a", attempt: 1, result: { ...result, text: "second" } },
    ]);
    expect(replay.items[0]).toMatchObject({ status: "succeeded", result: { text: "first" } });
  });

  it("a settle record from before usage counted API calls still reads (apiCalls 0), so an older batch resumes", () => {
    const { apiCalls: _calls, ...olderUsage } = result.usage;
    const record = journalRecordSchema.parse({
      type: "completed",
      at: "2026-01-01T00:00:00.000Z",
      id: "a",
      attempt: 1,
      result: { ...result, usage: olderUsage },
    });
    expect(record).toMatchObject({ result: { usage: { ...olderUsage, apiCalls: 0 } } });
  });

  it("R-R5: a live owner's lock refuses a second process; a dead owner's lock is taken over", async () => {
    const backend = await openLocalJournalBackend({ dir });
    await backend.close();
    const { writeFile } = await import("node:fs/promises");
    const { procProbe } = await import("@forkloop/sdk/owner-lock");
    const live = {
      instance: "x",
      ...procProbe.self(),
      pid: process.ppid,
      startTime: procProbe.startTimeOf(process.ppid),
      since: "2026-01-01T00:00:00.000Z",
      command: "forkloop batch --resume b-1",
    };
    await writeFile(join(dir, "lock"), JSON.stringify(live));
    await expect(openLocalJournalBackend({ dir, batchId: "b-1" })).rejects.toThrow(
      `batch b-1 is in use by process ${process.ppid}`,
    );
    await writeFile(join(dir, "lock"), "999999999");
    const takeover = await openLocalJournalBackend({ dir });
    await takeover.close();
  });

  it("retryFailed: failed items run again under a new attempt; the new outcome replaces the failure", async () => {
    const first = await openLocalJournalBackend({ dir });
    await first.enqueue(items.slice(0, 2));
    const a = await first.claim("w");
    await first.fail(a!, { code: "model_error", message: "boom" });
    const b = await first.claim("w");
    await first.complete(b!, result);
    await first.close();

    const plain = await openLocalJournalBackend({ dir });
    expect(await plain.claim("w")).toBeNull(); // failed is finished by default
    await plain.close();

    const retry = await openLocalJournalBackend({ dir, retryFailed: true });
    const again = await retry.claim("w");
    expect(again).toMatchObject({ item: { id: "a" }, attempt: 2 });
    expect(await retry.claim("w")).toBeNull(); // the succeeded one is not rerun
    await retry.complete(again!, result);
    await retry.close();
    const replay = replayJournal((await readJournal(dir)).records);
    expect(replay.items.map((state) => [state.item.id, state.status, state.error])).toEqual([
      ["a", "succeeded", undefined],
      ["b", "succeeded", undefined],
    ]);
  });

  it("R-R4: a damaged journal is refused with the file, the offset, the intact records and the fix", async () => {
    const first = await openLocalJournalBackend({ dir });
    await first.enqueue(items);
    const a = await first.claim("w");
    await first.complete(a!, result);
    await first.close();
    const path = join(dir, "journal.log");
    const bytes = await readFile(path);
    const secondLine = bytes.indexOf(0x0a) + 1;
    bytes[secondLine + 20] = (bytes[secondLine + 20] ?? 0) ^ 0x01; // one flipped bit in record 2
    await writeFile(path, bytes);
    await expect(openLocalJournalBackend({ dir, batchId: "b-1" })).rejects.toThrow(
      new RegExp(
        `${path} is damaged at byte ${secondLine} of ${bytes.length}: the 1 records before it are intact, 3 readable records follow it; nothing was changed or run\\. Keep every readable record .*--resume b-1 --repair`,
      ),
    );
    expect(await readFile(path)).toEqual(bytes);
  });

  it("R-R4: --repair keeps every readable record, moves the damaged file aside, re-runs what is unknown", async () => {
    const first = await openLocalJournalBackend({ dir });
    await first.enqueue(items);
    for (let index = 0; index < 3; index++) await first.complete((await first.claim("w"))!, result);
    await first.close();
    const path = join(dir, "journal.log");
    const lines = (await readFile(path, "utf8")).split("\n");
    // Damage the enqueue record of b: its later claim/complete records now name an unknown item.
    lines[1] = `${lines[1]?.slice(0, 30)}#garbage#`;
    const damaged = lines.join("\n");
    await writeFile(path, damaged);
    const repaired = await openLocalJournalBackend({ dir, repair: true });
    expect(repaired.repaired).toMatchObject({ keptRecords: 8, droppedRecords: 1 });
    expect(await readFile(repaired.repaired!.backupPath, "utf8")).toBe(damaged);
    // a and c stay finished; b is unknown until the source is listed again (then it runs).
    expect((await repaired.list()).map((state) => [state.item.id, state.status])).toEqual([
      ["a", "succeeded"],
      ["c", "succeeded"],
    ]);
    await repaired.enqueue(items);
    expect(await repaired.claim("w")).toMatchObject({ item: { id: "b" } });
    await repaired.close();
    expect((await readJournal(dir)).contents.damage).toBeUndefined();
    expect((await readdir(dir)).filter((name) => name.startsWith("journal.log.damaged-"))).toHaveLength(1);
  });

  it("an item interrupted after a mutating tool began is listed as 'may have run twice'", async () => {
    const first = await openLocalJournalBackend({ dir });
    await first.enqueue(items.slice(0, 2));
    const a = await first.claim("w");
    const b = await first.claim("w");
    await first.recordSideEffect(a!, "Edit");
    await first.recordSideEffect(a!, "Bash"); // once per attempt
    await first.complete(b!, result); // b finished: no repeat, even if it had side effects
    await first.close(); // killed while a ran

    const second = await openLocalJournalBackend({ dir });
    const redo = await second.claim("w");
    expect(redo).toMatchObject({ item: { id: "a" }, attempt: 2 });
    await second.complete(redo!, result);
    await second.close();
    const replay = replayJournal((await readJournal(dir)).records);
    expect(replay.items.map((state) => [state.item.id, state.mayHaveRunTwice])).toEqual([
      ["a", [{ attempt: 1, tool: "Edit" }]],
      ["b", undefined],
    ]);
    const sideEffects = (await readJournal(dir)).records.filter((record) => record.type === "side_effect");
    expect(sideEffects).toHaveLength(1);
  });
});
