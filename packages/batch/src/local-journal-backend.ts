import { rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { OptionsError } from "@forkloop/sdk/errors";
import { acquireOwnerLock } from "@forkloop/sdk/owner-lock";
import { syncDirectory, writeDurably } from "@forkloop/tools/workspace";
import { z } from "zod";
import {
  type AppendLog,
  encodeRecord,
  type LogContents,
  type LogDamage,
  type OpenFile,
  openLog,
  readLog,
} from "./append-log.js";
import { readSealFile, writeSealFile } from "./enqueue-seal.js";
import type {
  ApplyingMember,
  Claim,
  EnqueueSeal,
  ItemError,
  ItemResult,
  ItemState,
  JobBackend,
  JobItem,
  PendingApply,
  SettleOutcome,
} from "./job-backend.js";

/**
 * The first JobBackend: an append-only, fsync'd journal in `<state dir>/batches/<id>/journal.log`.
 * The state of every item is a replay of the journal, so after a crash (kill -9) a resume knows
 * exactly what finished (skipped), what was running (redone under a new attempt) and what never
 * started. An item is settled at most once: `complete`/`fail` refuse a finished item, and the
 * settle record is durable before the call resolves.
 */

const itemSchema = z.object({ id: z.string(), label: z.string(), prompt: z.string() });
export const usageTotalsSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheCreationInputTokens: z.number(),
  cacheReadInputTokens: z.number(),
  // Loop-core's UsageTotals; a journal written before it counted no calls.
  apiCalls: z.number().int().nonnegative().default(0),
});
const resultSchema = z.object({
  turns: z.number(),
  usage: usageTotalsSchema,
  costUsd: z.number(),
  onlineCostUsd: z.number().optional(),
  durationMs: z.number(),
  terminal: z.string().optional(),
  text: z.string(),
  compactions: z
    .array(z.object({ trigger: z.string(), preTokens: z.number(), postTokens: z.number() }))
    .readonly()
    .optional(),
  apiRetries: z.number().int().nonnegative().optional(),
  applied: z.array(z.string()).readonly().optional(),
  structuredOutput: z.unknown().optional(),
});
const errorSchema = z.object({
  code: z.string(),
  message: z.string(),
  conflict: z
    .object({
      files: z.array(z.object({ path: z.string(), reason: z.string() })).readonly(),
      patch: z.string(),
      workspace: z.string().optional(),
    })
    .optional(),
});

export const journalRecordSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("enqueued"), at: z.string(), item: itemSchema }),
  z.object({
    type: z.literal("claimed"),
    at: z.string(),
    id: z.string(),
    attempt: z.number().int().positive(),
    worker: z.string(),
    pid: z.number().int(),
  }),
  z.object({ type: z.literal("heartbeat"), at: z.string(), id: z.string(), attempt: z.number().int() }),
  z.object({
    type: z.literal("side_effect"),
    at: z.string(),
    id: z.string(),
    attempt: z.number().int(),
    tool: z.string(),
  }),
  // R-B3: the item's change is being written into the workspace from this plan (durable first).
  z.object({
    type: z.literal("applying"),
    at: z.string(),
    id: z.string(),
    attempt: z.number().int(),
    plan: z.string(),
    result: resultSchema,
  }),
  // R-B3: the changes of several items that settled together, written from one plan: one record
  // names them all, so a resume finishes the plan for every one of them or for none.
  z.object({
    type: z.literal("applying_group"),
    at: z.string(),
    plan: z.string(),
    members: z.array(z.object({ id: z.string(), attempt: z.number().int(), result: resultSchema })).min(1),
  }),
  z.object({
    type: z.literal("completed"),
    at: z.string(),
    id: z.string(),
    attempt: z.number().int(),
    result: resultSchema,
  }),
  z.object({
    type: z.literal("failed"),
    at: z.string(),
    id: z.string(),
    attempt: z.number().int(),
    error: errorSchema,
    result: resultSchema.optional(),
  }),
]);
export type JournalRecord = z.infer<typeof journalRecordSchema>;

export interface JournalReplay {
  /** Items in enqueue order with their state; a claim with no settle record reads as pending. */
  readonly items: readonly ItemState[];
  /** Items that were running when the previous process stopped (they will be redone). */
  readonly interrupted: readonly string[];
  /** R-B3: items stopped while their change was being applied: finished from the plan, not redone. */
  readonly applying: readonly PendingApply[];
}

/**
 * Pure: the state of every item after the given records (R: resume skips finished items). With
 * `lenient` (a `--repair`), records of items whose enqueue record was lost are skipped, so those
 * items are unknown and run again once the batch's source is listed again.
 */
export function replayJournal(records: readonly JournalRecord[], lenient = false): JournalReplay {
  type Replayed = { -readonly [K in keyof ItemState]: ItemState[K] } & {
    sideEffect?: string;
    applying?: { plan: string; result: ItemResult };
  };
  const states = new Map<string, Replayed>();
  const repeated = (state: Replayed, attempt: number, tool: string) => {
    state.mayHaveRunTwice = [...(state.mayHaveRunTwice ?? []), { attempt, tool }];
  };
  for (const record of records) {
    if (record.type === "enqueued") {
      if (!states.has(record.item.id))
        states.set(record.item.id, { item: record.item, status: "pending", attempts: 0 });
      continue;
    }
    if (record.type === "applying_group") {
      for (const member of record.members) {
        const state = states.get(member.id);
        if (!state) {
          if (lenient) continue;
          throw new Error(`journal: applying_group record for unknown item ${member.id}`);
        }
        if (state.status === "running" && state.attempts === member.attempt)
          state.applying = { plan: record.plan, result: stripUndefined(member.result) };
      }
      continue;
    }
    const state = states.get(record.id);
    if (!state) {
      if (lenient) continue;
      throw new Error(`journal: ${record.type} record for unknown item ${record.id}`);
    }
    switch (record.type) {
      case "claimed":
        // The attempt before this one stopped while running, after a mutating tool had begun.
        if (state.status === "running" && state.sideEffect) repeated(state, state.attempts, state.sideEffect);
        delete state.sideEffect;
        delete state.applying;
        // A new attempt (an interrupted or, with --retry-failed, a failed item): its own outcome counts.
        state.status = "running";
        state.attempts = record.attempt;
        delete state.error;
        delete state.result;
        break;
      case "heartbeat":
        break;
      case "applying":
        if (state.status === "running" && state.attempts === record.attempt)
          state.applying = { plan: record.plan, result: stripUndefined(record.result) };
        break;
      case "side_effect":
        if (state.status === "running" && state.attempts === record.attempt) state.sideEffect ??= record.tool;
        break;
      case "completed":
        if (state.status === "succeeded" || state.status === "failed") break; // never twice (see settle)
        state.status = "succeeded";
        state.result = stripUndefined(record.result);
        delete state.applying;
        break;
      case "failed":
        if (state.status === "succeeded" || state.status === "failed") break;
        state.status = "failed";
        state.error = stripUndefinedError(record.error);
        delete state.applying;
        if (record.result) state.result = stripUndefined(record.result);
        break;
      default: {
        const unreachable: never = record;
        throw new Error(`journal: unknown record ${JSON.stringify(unreachable)}`);
      }
    }
  }
  const interrupted: string[] = [];
  const applying: PendingApply[] = [];
  const items = [...states.values()].map(({ sideEffect, applying: apply, ...state }): ItemState => {
    if (state.status !== "running") return state;
    // Its change was being written: finished from the plan on open, never run again (R-B3).
    if (apply) {
      applying.push({ claim: { item: state.item, attempt: state.attempts }, ...apply });
      return state;
    }
    interrupted.push(state.item.id);
    // Interrupted now: it is redone on resume, so its side effects may happen twice.
    if (sideEffect) repeated(state, state.attempts, sideEffect);
    return { ...state, status: "pending" };
  });
  return { items, interrupted, applying };
}

function stripUndefined(result: z.infer<typeof resultSchema>): ItemResult {
  const { terminal, compactions, apiRetries, applied, onlineCostUsd, structuredOutput, ...rest } = result;
  return {
    ...rest,
    ...(onlineCostUsd === undefined ? {} : { onlineCostUsd }),
    ...(terminal === undefined ? {} : { terminal }),
    ...(compactions === undefined ? {} : { compactions }),
    ...(apiRetries === undefined ? {} : { apiRetries }),
    ...(applied === undefined ? {} : { applied }),
    ...(structuredOutput === undefined ? {} : { structuredOutput }),
  };
}

function stripUndefinedError(error: z.infer<typeof errorSchema>): ItemError {
  const { conflict, ...rest } = error;
  if (conflict === undefined) return rest;
  const { workspace, ...fields } = conflict;
  return { ...rest, conflict: { ...fields, ...(workspace === undefined ? {} : { workspace }) } };
}

export interface LocalJournalOptions {
  /** The batch directory, `<state dir>/batches/<id>`. */
  readonly dir: string;
  readonly now?: () => Date;
  /** Put items that failed back in the queue (a new attempt each); their `failed` record stays. */
  readonly retryFailed?: boolean;
  /** R-B4 `--retry-conflicts`: put only the items whose change was a conflict back in the queue. */
  readonly retryConflicts?: boolean;
  /** R-R4: a damaged journal keeps its readable records (rewritten) instead of stopping. */
  readonly repair?: boolean;
  /** For the messages' fix (`forkloop batch --resume ID --repair`). */
  readonly batchId?: string;
  /** What this process runs, shown to a second one the lock refuses (default `forkloop batch --resume ID`). */
  readonly command?: string;
  /** How the journal file is opened (default `fs.open`; tests inject a failing disk). */
  readonly openFile?: OpenFile;
}

export const JOURNAL_FILE = "journal.log";
/** The enqueue seal (enqueue-seal.ts), beside the journal: written once every item is enqueued. */
const ENQUEUED_MARKER = "enqueued.ok";
/** R-R5: one process per batch (a second `--resume` would run items twice); @forkloop/sdk's owner lock. */
export const LOCK_FILE = "lock";

/** The journal's records, checked against the schema; the contents say torn tail / damage. */
export async function readJournal(
  dir: string,
): Promise<{ records: JournalRecord[]; contents: LogContents; laterRecords: JournalRecord[] }> {
  const contents = await readLog(join(dir, JOURNAL_FILE));
  const records: JournalRecord[] = [];
  for (const [index, raw] of contents.records.entries()) {
    const parsed = journalRecordSchema.safeParse(raw);
    if (!parsed.success) {
      // A record with a good checksum but the wrong shape: edited, or from another version.
      return {
        records,
        contents: { ...contents, damage: schemaDamage(contents, index) },
        laterRecords: validRecords(contents.records.slice(index + 1)),
      };
    }
    records.push(parsed.data);
  }
  return { records, contents, laterRecords: validRecords(contents.damage?.laterRecords ?? []) };
}

function validRecords(raw: readonly unknown[]): JournalRecord[] {
  return raw.flatMap((record) => {
    const parsed = journalRecordSchema.safeParse(record);
    return parsed.success ? [parsed.data] : [];
  });
}

function schemaDamage(contents: LogContents, index: number): LogDamage {
  return {
    offset: -1,
    intactRecords: index,
    laterRecords: contents.records.slice(index + 1),
    badLines: 1,
  };
}

export interface OpenedJournal {
  /** A torn last record (an interrupted write) was cut off: its size, or 0. */
  readonly tornBytes: number;
  /** The lock of an owner proven dead (kill -9, a reboot, a reused pid) was taken over: said once. */
  readonly tookOverLock?: string;
  /** Finished items put back in the queue (`retryFailed`, `retryConflicts`), by id. */
  readonly retried: readonly string[];
  /** `--repair` rewrote a damaged journal: what it kept and where the damaged file went. */
  readonly repaired?: {
    readonly keptRecords: number;
    readonly droppedRecords: number;
    readonly backupPath: string;
  };
}

export async function openLocalJournalBackend(
  options: LocalJournalOptions,
): Promise<JobBackend & OpenedJournal> {
  const id = options.batchId ?? options.dir;
  const lock = await acquireOwnerLock(join(options.dir, LOCK_FILE), {
    what: `batch ${id}`,
    command: options.command ?? `forkloop batch --resume ${id}`,
  });
  const releaseLock = () => lock.release();
  try {
    const path = join(options.dir, JOURNAL_FILE);
    let { records, contents, laterRecords } = await readJournal(options.dir);
    let repaired: OpenedJournal["repaired"];
    if (contents.damage) {
      if (!options.repair) throw new OptionsError(journalDamageMessage(path, contents, options.batchId));
      const kept = [...records, ...laterRecords];
      const backupPath = await rewriteJournal(path, kept);
      repaired = {
        keptRecords: kept.length,
        droppedRecords: contents.damage.badLines,
        backupPath,
      };
      records = kept;
      contents = await readLog(path);
    }
    const replay = replayJournal(records, repaired !== undefined);
    const log = await openLog(path, contents, options.openFile);
    const retry = (state: ItemState): boolean =>
      state.status === "failed" &&
      (options.retryFailed === true || (options.retryConflicts === true && state.error?.code === "conflict"));
    const backend = new LocalJournalBackend(
      options.dir,
      log,
      replay,
      releaseLock,
      options.now ?? (() => new Date()),
      retry,
    );
    return Object.assign(backend, {
      retried: replay.items.filter(retry).map((state) => state.item.id),
      tornBytes: contents.tornTail ? contents.fileBytes - contents.validBytes : 0,
      ...(repaired === undefined ? {} : { repaired }),
      ...(lock.tookOver === undefined ? {} : { tookOverLock: lock.tookOver }),
    });
  } catch (error) {
    await releaseLock();
    throw error;
  }
}

/** R-R4: where the journal is damaged, what is intact, and the fix. */
function journalDamageMessage(path: string, contents: LogContents, batchId: string | undefined): string {
  const damage = contents.damage!;
  const where =
    damage.offset >= 0
      ? `is damaged at byte ${damage.offset} of ${contents.fileBytes}`
      : `has a record of an unknown shape (record ${damage.intactRecords + 1})`;
  return `${path} ${where}: the ${damage.intactRecords} records before it are intact, ${damage.laterRecords.length} readable records follow it; nothing was changed or run. Keep every readable record and re-run what is unknown with \`forkloop batch --resume ${batchId ?? "<id>"} --repair\` (the damaged file is kept beside it).`;
}

/**
 * Writes `records` as the new journal atomically (temp file, fsync, rename, directory fsync);
 * the damaged file is moved aside, never deleted. Returns where it went.
 */
async function rewriteJournal(path: string, records: readonly JournalRecord[]): Promise<string> {
  const backupPath = `${path}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  await writeDurably(`${path}.repair-tmp`, records.map((record) => encodeRecord(record)).join(""));
  await rename(path, backupPath);
  await rename(`${path}.repair-tmp`, path);
  await syncDirectory(dirname(path));
  return backupPath;
}

class LocalJournalBackend implements JobBackend {
  readonly #states = new Map<string, ItemState>();
  readonly #queue: string[] = [];
  /** Items whose settle record is being written. */
  readonly #settling = new Set<string>();
  /** `id#attempt` of the attempts whose side effect is recorded (once each). */
  readonly #sideEffects = new Set<string>();
  readonly #interrupted: readonly string[];
  readonly #applying: readonly PendingApply[];
  readonly location: string;

  constructor(
    private readonly dir: string,
    private readonly log: AppendLog,
    replay: JournalReplay,
    private readonly releaseLock: () => Promise<void>,
    private readonly now: () => Date,
    retry: (state: ItemState) => boolean,
  ) {
    this.#interrupted = replay.interrupted;
    this.#applying = replay.applying;
    this.location = join(dir, JOURNAL_FILE);
    for (const state of replay.items) {
      if (retry(state)) {
        // Back to pending; a later `completed` record supersedes the `failed` one on replay.
        this.#states.set(state.item.id, { item: state.item, status: "pending", attempts: state.attempts });
        this.#queue.push(state.item.id);
        continue;
      }
      this.#states.set(state.item.id, state);
      if (state.status === "pending") this.#queue.push(state.item.id);
    }
  }

  async enqueue(items: readonly JobItem[]): Promise<void> {
    const fresh = items.filter((item) => !this.#states.has(item.id));
    await Promise.all(fresh.map((item) => this.log.append({ type: "enqueued", at: this.#at(), item })));
    for (const item of fresh) {
      this.#states.set(item.id, { item, status: "pending", attempts: 0 });
      this.#queue.push(item.id);
    }
  }

  async claim(workerId: string): Promise<Claim | null> {
    const id = this.#queue.shift();
    if (id === undefined) return null;
    const state = this.#states.get(id);
    if (!state) throw new Error(`journal: queued item ${id} has no state`);
    const attempt = state.attempts + 1;
    // R-R4: the state changes only once the record is durable.
    await this.log.append({
      type: "claimed",
      at: this.#at(),
      id,
      attempt,
      worker: workerId,
      pid: process.pid,
    });
    this.#states.set(id, { ...state, status: "running", attempts: attempt });
    return { item: state.item, attempt };
  }

  async recordSideEffect(claim: Claim, tool: string): Promise<void> {
    const key = `${claim.item.id}#${claim.attempt}`;
    if (this.#sideEffects.has(key) || this.#states.get(claim.item.id)?.status !== "running") return;
    this.#sideEffects.add(key);
    await this.log.append({
      type: "side_effect",
      at: this.#at(),
      id: claim.item.id,
      attempt: claim.attempt,
      tool,
    });
  }

  async recordApplying(claim: Claim, plan: string, result: ItemResult): Promise<void> {
    const state = this.#states.get(claim.item.id);
    if (state?.status !== "running" || state.attempts !== claim.attempt)
      throw new Error(
        `journal: item ${claim.item.id} attempt ${claim.attempt} is not running; its change is not applied`,
      );
    await this.log.append({
      type: "applying",
      at: this.#at(),
      id: claim.item.id,
      attempt: claim.attempt,
      plan,
      result,
    });
  }

  async recordApplyingGroup(members: readonly ApplyingMember[], plan: string): Promise<void> {
    for (const { claim } of members) {
      const state = this.#states.get(claim.item.id);
      if (state?.status !== "running" || state.attempts !== claim.attempt)
        throw new Error(
          `journal: item ${claim.item.id} attempt ${claim.attempt} is not running; its group's change is not applied`,
        );
    }
    await this.log.append({
      type: "applying_group",
      at: this.#at(),
      plan,
      members: members.map(({ claim, result }) => ({ id: claim.item.id, attempt: claim.attempt, result })),
    });
  }

  async pendingApplies(): Promise<readonly PendingApply[]> {
    return this.#applying.filter((apply) => this.#states.get(apply.claim.item.id)?.status === "running");
  }

  async heartbeat(claim: Claim): Promise<void> {
    if (this.#states.get(claim.item.id)?.status !== "running") return;
    await this.log.append({ type: "heartbeat", at: this.#at(), id: claim.item.id, attempt: claim.attempt });
  }

  complete(claim: Claim, result: ItemResult): Promise<SettleOutcome> {
    return this.#settle(claim, { status: "succeeded", result }, { type: "completed", result });
  }

  fail(claim: Claim, error: ItemError, result?: ItemResult): Promise<SettleOutcome> {
    const state =
      result === undefined
        ? { status: "failed" as const, error }
        : { status: "failed" as const, error, result };
    return this.#settle(claim, state, { type: "failed", error, ...(result === undefined ? {} : { result }) });
  }

  async #settle(
    claim: Claim,
    next: Pick<ItemState, "status" | "result" | "error">,
    record: { type: "completed" | "failed" } & Record<string, unknown>,
  ): Promise<SettleOutcome> {
    const state = this.#states.get(claim.item.id);
    if (!state) return { ok: false, reason: `unknown item ${claim.item.id}` };
    if (state.status !== "running" || state.attempts !== claim.attempt) {
      // Never settle an item twice: a stale attempt or a finished item is refused.
      return {
        ok: false,
        reason: `item ${claim.item.id} is ${state.status} (attempt ${state.attempts}), not attempt ${claim.attempt}`,
      };
    }
    if (this.#settling.has(claim.item.id)) {
      return { ok: false, reason: `item ${claim.item.id} is being settled already` };
    }
    // R-R4: a completion counts only once it is on disk (a failed write leaves it running).
    this.#settling.add(claim.item.id);
    try {
      await this.log.append({ ...record, at: this.#at(), id: claim.item.id, attempt: claim.attempt });
    } finally {
      this.#settling.delete(claim.item.id);
    }
    this.#states.set(claim.item.id, {
      item: state.item,
      attempts: state.attempts,
      ...definedOnly(next),
      ...(state.mayHaveRunTwice ? { mayHaveRunTwice: state.mayHaveRunTwice } : {}),
    });
    return { ok: true };
  }

  async list(): Promise<readonly ItemState[]> {
    return [...this.#states.values()];
  }

  enqueueSeal(): Promise<EnqueueSeal | "unverifiable" | undefined> {
    return readSealFile(join(this.dir, ENQUEUED_MARKER));
  }

  sealEnqueue(seal: EnqueueSeal): Promise<void> {
    return writeSealFile(join(this.dir, ENQUEUED_MARKER), seal);
  }

  /** Items the journal shows claimed and never settled when it was opened (kill -9, Ctrl-C). */
  async interrupted(): Promise<readonly string[]> {
    return this.#interrupted;
  }

  async close(): Promise<void> {
    await this.log.close();
    await this.releaseLock();
  }

  #at(): string {
    return this.now().toISOString();
  }
}

function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}

// The BullMQ backend stores the same item, result and error shapes (queue-store.ts).
export {
  errorSchema as itemErrorSchema,
  itemSchema as jobItemSchema,
  resultSchema as itemResultSchema,
  stripUndefined,
  stripUndefinedError,
};
