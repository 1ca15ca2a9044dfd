import { createHash } from "node:crypto";
import { mkdir, readdir, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import type { FileChange, ItemWorkspace, WorkspaceIsolation } from "@forkloop/tools/workspace";
import {
  type ApplyPlan,
  type Conflict,
  changesPatch,
  type Execution,
  executePlan,
  mergeChanges,
  type PlannedFile,
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
  /**
   * The run is over: the idle copies removed (none is left behind by a run that ends). `settled`:
   * no item is left to run, so the ref holding a rebased base (`--retry-conflicts`) is deleted.
   */
  finish(settled?: boolean): Promise<void>;
  /** An apply the journal shows started and unsettled, finished from its plan and recorded. */
  recover(apply: PendingApply, record: Recorder): Promise<Settled>;
}

type Settled = Exclude<ItemOutcome, { ok: "cancelled" }>;
/** Where an apply's plan is named before its first write (the batch's journal). */
export type ApplyJournal = Pick<JobBackend, "recordApplying" | "recordApplyingGroup">;

/** A settled item's change waiting for the apply lock. */
interface Member {
  readonly claim: Claim;
  readonly result: ItemResult;
  readonly changes: readonly FileChange[];
  readonly workspaceDir: string | undefined;
  readonly journal: ApplyJournal;
  readonly record: Recorder;
}
interface Waiting extends Member {
  resolve(settled: Settled): void;
  reject(error: unknown): void;
}
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

  /**
   * R-B3: the items that settled while the apply lock was held are applied together in its next
   * turn — their changes merged one after another (each over the ones before it), written from ONE
   * plan named by ONE journal record, and their settle records written side by side (one group
   * commit): a turn's fsyncs are shared by the group instead of paid by each item (bench/batch-isolation).
   */
  const waiting: Waiting[] = [];
  const applyInTurn = (member: Member): Promise<Settled> =>
    new Promise<Settled>((resolve, reject) => {
      waiting.push({ ...member, resolve, reject });
      void applying.run(async () => {
        const first = waiting[0];
        if (first === undefined) return; // taken by an earlier turn's group
        const journal = first.journal;
        // One journal per group; a journal that cannot record a group applies one item a turn.
        const group =
          journal.recordApplyingGroup === undefined
            ? waiting.splice(0, 1)
            : waiting.filter((entry) => entry.journal === journal);
        for (const entry of group) waiting.splice(waiting.indexOf(entry), 1);
        const settled = await applyGroup(group).catch((error: unknown) => ({ error }));
        if ("error" in settled) for (const entry of group) entry.reject(settled.error);
        else for (const [index, entry] of group.entries()) entry.resolve(settled[index]!);
      });
    });

  /** Merges the group's changes over the tree, writes them and records each member (under the lock). */
  const applyGroup = async (group: readonly Member[]): Promise<Settled[]> => {
    const over = new Map<string, Buffer | null>();
    const files = new Map<string, PlannedFile>();
    const outcomes: Settled[] = [];
    const planned: { index: number; member: Member; result: ItemResult }[] = [];
    for (const [index, member] of group.entries()) {
      const merged = await mergeChanges(isolation.root, member.changes, {
        over,
        ...(home === undefined ? {} : { home }),
      });
      if (!merged.ok) {
        outcomes[index] = await conflictOutcome(
          member.claim,
          merged.conflicts,
          await changesPatch(member.changes),
          member.result,
          member.workspaceDir,
        );
        continue;
      }
      const result: ItemResult = { ...member.result, applied: merged.plan.files.map((file) => file.path) };
      outcomes[index] = { ok: true, result };
      if (merged.plan.files.length === 0) continue;
      planned.push({ index, member, result });
      for (const file of merged.plan.files) {
        over.set(file.path, merged.contents.get(file.path) ?? null);
        // The plan takes each path from the workspace as it is now to the group's last change of it.
        // (A path an earlier member created keeps its null `before`.)
        const earlier = files.get(file.path);
        files.set(file.path, { ...file, before: earlier === undefined ? file.before : earlier.before });
      }
    }
    const [owner] = planned;
    if (owner !== undefined) {
      const journal = owner.member.journal;
      const plan: ApplyPlan = { files: [...files.values()] };
      const contents = new Map<string, Buffer>();
      for (const [path, content] of over) if (content !== null) contents.set(path, content);
      // Named after its first member: removed by that member's release, once every member's
      // settle record is durable (a resume still finds it until then).
      const name = planDir(owner.member.claim);
      const dir = join(batchDir, name);
      await writePlan(dir, plan, contents);
      if (planned.length > 1 && journal.recordApplyingGroup !== undefined)
        await journal.recordApplyingGroup(
          planned.map(({ member, result }) => ({ claim: member.claim, result })),
          name,
        );
      else if (planned.length === 1 && journal.recordApplying !== undefined)
        await journal.recordApplying(owner.member.claim, name, owner.result);
      else throw new Error("the batch's backend cannot journal an apply");
      const done = await executePlan(isolation.root, dir, plan, contents);
      for (const { index, member, result } of planned) {
        const diverged = done.diverged.filter((path) => result.applied?.includes(path));
        if (diverged.length === 0) continue;
        // Changed by someone else between the read and the write (the user, another batch).
        outcomes[index] = await conflictOutcome(
          member.claim,
          diverged.map((path) => ({ path, reason: "changed in the workspace while it was being applied" })),
          await changesPatch(member.changes),
          { ...result, applied: done.written.filter((path) => result.applied?.includes(path)) },
          member.workspaceDir,
        );
      }
    }
    // Side by side: the journal writes them in one group commit. Any failure is passed on once
    // every record has settled.
    const recorded = await Promise.allSettled(group.map((member, index) => member.record(outcomes[index]!)));
    const failed = recorded.find((entry) => entry.status === "rejected");
    if (failed !== undefined) throw failed.reason;
    return outcomes;
  };

  /** A plan carried out on resume: once for all the members of its group (R-B3). */
  const recovering = new Map<string, Promise<Execution>>();
  /**
   * The pending members each plan still has on resume. A group's plan is named after its first
   * member, whose release removes it; when that member's record was durable before the stop and
   * another's was not, the plan goes with its last recovered member instead.
   */
  const pendingMembers = new Map<string, number>();

  return {
    async begin(pending) {
      await isolation.sweep();
      for (const apply of pending) pendingMembers.set(apply.plan, (pendingMembers.get(apply.plan) ?? 0) + 1);
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
      return applyInTurn({
        claim,
        result: outcome.result,
        changes,
        workspaceDir: workspace.dir,
        journal,
        record,
      });
    },

    applyReturned(claim, result, changes, journal, record) {
      return applyInTurn({ claim, result, changes, workspaceDir: undefined, journal, record });
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

    async finish(settled = false) {
      await pool.drain();
      await isolation.close();
      if (settled) await isolation.dropBase();
    },

    recover(pending, record) {
      return applying.run(async () => {
        const dir = join(batchDir, pending.plan);
        let execution = recovering.get(pending.plan);
        if (execution === undefined) {
          execution = readPlan(dir).then((plan) => executePlan(isolation.root, dir, plan));
          recovering.set(pending.plan, execution);
        }
        const executed = await execution;
        // A member of a group: its own paths (a record without them: the whole plan was its own).
        const own = pending.result.applied;
        const done = {
          diverged: executed.diverged.filter((path) => own === undefined || own.includes(path)),
        };
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
        const left = (pendingMembers.get(pending.plan) ?? 1) - 1;
        pendingMembers.set(pending.plan, left);
        // A plan that met a changed file stays: its conflict names it.
        if (left === 0 && executed.diverged.length === 0) await rm(dir, { recursive: true, force: true });
        return settled;
      });
    },
  };
}
