import { createHash } from "node:crypto";
import { mkdir, readdir, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import type { FileChange, ItemWorkspace, WorkspaceIsolation } from "@forkloop/tools/workspace";
import {
  type Conflict,
  changesPatch,
  executePlan,
  mergeChanges,
  readPlan,
  SerialLock,
  writeDurably,
  writePlan,
} from "@forkloop/tools/workspace";
import type { ItemOutcome } from "./batch-runner.js";
import type { Claim, ItemResult, JobBackend, PendingApply } from "./job-backend.js";
import { workspacePool } from "./workspace-pool.js";

/**
 * What `runBatch` asks of isolation (R-B2, R-B3, R-B4): a copy of the project for each claim, a
 * succeeded item's change applied to the real workspace once — merged under one lock, its plan
 * durable and named in the journal before a file is written — or kept aside as a conflict, and
 * the applies a kill -9 cut finished on resume from their plans.
 */
export interface ItemIsolator {
  /**
   * Removes what an earlier run left (kill -9): item copies, and plans the journal never named
   * (written, then killed before the record); `pending` are the plans a resume still carries out.
   */
  begin(pending: readonly PendingApply[]): Promise<void>;
  /** The claim with its own workspace. */
  prepare(claim: Claim): Promise<Claim>;
  /**
   * A succeeded item's change applied (or its conflict), then `record` called with the outcome —
   * under the apply lock, so no other change is applied between an item's apply and its settle
   * record: at most one apply is ever cut by a kill, and its plan meets the tree it left. Any
   * other outcome is recorded as it is.
   */
  settle(claim: Claim, outcome: ItemOutcome, journal: ApplyJournal, record: Recorder): Promise<ItemOutcome>;
  /**
   * R-B1, R-B3: a change made elsewhere (a queued item's, on its worker) applied as `settle`
   * applies a local one — merged under the same lock, its plan named in `journal` before a file
   * is written — then `record` called with the outcome.
   */
  applyReturned(
    claim: Claim,
    result: ItemResult,
    changes: readonly FileChange[],
    journal: ApplyJournal,
    record: Recorder,
  ): Promise<Settled>;
  /**
   * After the settle record (or none): the copy kept for a conflict, else put back to the base
   * for the next item (a pool, `workspacePool`); the plan removed.
   */
  release(claim: Claim, outcome: ItemOutcome): Promise<void>;
  /** The run is over: the idle copies removed (none is left behind by a run that ends). */
  finish(): Promise<void>;
  /** An apply the journal shows started and unsettled, finished from its plan and recorded. */
  recover(apply: PendingApply, record: Recorder): Promise<Settled>;
}

type Settled = Exclude<ItemOutcome, { ok: "cancelled" }>;
/** Where an apply's plan is named before its first write (the batch's journal). */
export type ApplyJournal = Pick<JobBackend, "recordApplying">;
/** Writes an item's settle record (the journal's `completed` or `failed`). */
export type Recorder = (outcome: Settled) => Promise<void>;

/** The item's first message says where it works: the prefix (system prompt) names the project. */
export function workspaceNote(projectDir: string, workspace: string): string {
  return `<workspace>This task works in its own copy of the project: ${workspace}. Every file of ${projectDir} is there at the same relative path, as it was when the batch started. Read and change files only in ${workspace} (relative paths and commands already resolve there); when the task succeeds, its changes are merged into ${projectDir}. Changes made anywhere else are not kept.</workspace>\n\n`;
}

function attemptName(claim: Claim): string {
  return createHash("sha256").update(`${claim.item.id}\0${claim.attempt}`).digest("hex").slice(0, 16);
}

/**
 * `retry`: how a conflict says to run the item again on the new base; null (a queued batch, which
 * cannot) leaves only the apply by hand.
 */
export function isolateItems(
  isolation: WorkspaceIsolation,
  batchDir: string,
  home?: string,
  retry: string | null = `forkloop batch --resume ${basename(batchDir)} --retry-conflicts`,
): ItemIsolator {
  const workspaces = new Map<string, ItemWorkspace>();
  const pool = workspacePool(isolation);
  // R-B3: one apply at a time, from reading the workspace to the journal's record and the writes.
  const applying = new SerialLock();
  const planDir = (claim: Claim) => `applies/${attemptName(claim)}`;

  const conflictOutcome = async (
    claim: Claim,
    conflicts: readonly Conflict[],
    patch: Buffer,
    result: ItemResult,
    workspace: string | undefined,
  ): Promise<Settled> => {
    await mkdir(join(batchDir, "conflicts"), { recursive: true, mode: 0o700 });
    const path = join(batchDir, "conflicts", `${attemptName(claim)}.patch`);
    await writeDurably(path, patch);
    const names = conflicts.map((conflict) => `${conflict.path} (${conflict.reason})`).join(", ");
    return {
      ok: false,
      error: {
        code: "conflict",
        message: `its change was not applied: ${names}. Its diff is kept in ${path}; apply it by hand (git apply --3way ${path})${retry === null ? "" : ` or run it again on the tree as it is now (${retry})`}.`,
        conflict: { files: conflicts, patch: path, ...(workspace === undefined ? {} : { workspace }) },
      },
      result,
    };
  };

  /** Merges the item's change over the tree and writes it (the caller holds the apply lock). */
  const apply = async (
    claim: Claim,
    itemResult: ItemResult,
    changes: readonly FileChange[],
    workspaceDir: string | undefined,
    journal: ApplyJournal,
  ): Promise<Settled> => {
    const merged = await mergeChanges(isolation.root, changes, home === undefined ? {} : { home });
    if (!merged.ok)
      return conflictOutcome(claim, merged.conflicts, await changesPatch(changes), itemResult, workspaceDir);
    const result: ItemResult = { ...itemResult, applied: merged.plan.files.map((file) => file.path) };
    if (merged.plan.files.length === 0) return { ok: true, result };
    if (journal.recordApplying === undefined) throw new Error("the batch's backend cannot journal an apply");
    const dir = join(batchDir, planDir(claim));
    await writePlan(dir, merged.plan, merged.contents);
    await journal.recordApplying(claim, planDir(claim), result);
    const done = await executePlan(isolation.root, dir, merged.plan, merged.contents);
    if (done.diverged.length === 0) return { ok: true, result };
    // Changed by someone else between the read and the write (the user, another batch).
    return conflictOutcome(
      claim,
      done.diverged.map((path) => ({ path, reason: "changed in the workspace while it was being applied" })),
      await changesPatch(changes),
      { ...result, applied: done.written },
      workspaceDir,
    );
  };

  return {
    async begin(pending) {
      await isolation.sweep();
      const named = new Set(pending.map((apply) => apply.plan));
      const plans = await readdir(join(batchDir, "applies")).catch(() => []);
      for (const name of plans)
        if (!named.has(`applies/${name}`))
          await rm(join(batchDir, "applies", name), { recursive: true, force: true });
    },

    async prepare(claim) {
      const workspace = await pool.acquire();
      workspaces.set(attemptName(claim), workspace);
      return { ...claim, workspace: workspace.dir };
    },

    async settle(claim, outcome, journal, record) {
      if (outcome.ok === "cancelled") return outcome;
      if (outcome.ok === false) {
        await record(outcome);
        return outcome;
      }
      const workspace = workspaces.get(attemptName(claim));
      if (workspace === undefined) throw new Error(`item ${claim.item.id} has no workspace to apply from`);
      const changes = await workspace.changes();
      return applying.run(async () => {
        const settled = await apply(claim, outcome.result, changes, workspace.dir, journal);
        await record(settled);
        return settled;
      });
    },

    applyReturned(claim, result, changes, journal, record) {
      return applying.run(async () => {
        const settled = await apply(claim, result, changes, undefined, journal);
        await record(settled);
        return settled;
      });
    },

    async release(claim, outcome) {
      const name = attemptName(claim);
      const workspace = workspaces.get(name);
      workspaces.delete(name);
      // A conflict keeps the item's copy and plan (named in the report); anything else is removed.
      if (outcome.ok === false && outcome.error.code === "conflict") return;
      await rm(join(batchDir, planDir(claim)), { recursive: true, force: true });
      if (workspace !== undefined) await pool.giveBack(workspace);
    },

    finish: () => pool.drain(),

    recover(pending, record) {
      return applying.run(async () => {
        const dir = join(batchDir, pending.plan);
        const plan = await readPlan(dir);
        const done = await executePlan(isolation.root, dir, plan);
        const settled: Settled =
          done.diverged.length === 0
            ? { ok: true, result: pending.result }
            : {
                ok: false,
                error: {
                  code: "conflict",
                  message: `its apply was cut short (the process stopped) and ${done.diverged.join(", ")} changed since; the rest of its change is applied. Its plan is kept in ${dir}.`,
                  conflict: {
                    files: done.diverged.map((path) => ({
                      path,
                      reason: "changed in the workspace since the apply began",
                    })),
                    patch: dir,
                  },
                },
                result: pending.result,
              };
        await record(settled);
        return settled;
      });
    },
  };
}
