import { open, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { type AppendLog, openLog, readLog } from "./append-log.js";
import { CliError } from "./cli-error.js";
import type {
  Claim,
  ItemError,
  ItemResult,
  ItemState,
  JobBackend,
  JobItem,
  SettleOutcome,
} from "./job-backend.js";

/**
 * The first JobBackend: an append-only, fsync'd journal in `.forkloop/batches/<id>/journal.log`.
 * The state of every item is a replay of the journal, so after a crash (kill -9) a resume knows
 * exactly what finished (skipped), what was running (redone under a new attempt) and what never
 * started. An item is settled at most once: `complete`/`fail` refuse a finished item, and the
 * settle record is durable before the call resolves.
 */

const itemSchema = z.object({ id: z.string(), label: z.string(), prompt: z.string() });
const usageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheCreationInputTokens: z.number(),
  cacheReadInputTokens: z.number(),
});
const resultSchema = z.object({
  turns: z.number(),
  usage: usageSchema,
  costUsd: z.number(),
  durationMs: z.number(),
  terminal: z.string().optional(),
  text: z.string(),
  compactions: z
    .array(z.object({ trigger: z.string(), preTokens: z.number(), postTokens: z.number() }))
    .readonly()
    .optional(),
});
const errorSchema = z.object({ code: z.string(), message: z.string() });

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
}

/** Pure: the state of every item after the given records (R: resume skips finished items). */
export function replayJournal(records: readonly JournalRecord[]): JournalReplay {
  const states = new Map<string, { -readonly [K in keyof ItemState]: ItemState[K] }>();
  for (const record of records) {
    if (record.type === "enqueued") {
      if (!states.has(record.item.id))
        states.set(record.item.id, { item: record.item, status: "pending", attempts: 0 });
      continue;
    }
    const state = states.get(record.id);
    if (!state) throw new Error(`journal: ${record.type} record for unknown item ${record.id}`);
    switch (record.type) {
      case "claimed":
        // A new attempt (an interrupted or, with --retry-failed, a failed item): its own outcome counts.
        state.status = "running";
        state.attempts = record.attempt;
        delete state.error;
        delete state.result;
        break;
      case "heartbeat":
        break;
      case "completed":
        if (state.status === "succeeded" || state.status === "failed") break; // never twice (see settle)
        state.status = "succeeded";
        state.result = stripUndefined(record.result);
        break;
      case "failed":
        if (state.status === "succeeded" || state.status === "failed") break;
        state.status = "failed";
        state.error = record.error;
        if (record.result) state.result = stripUndefined(record.result);
        break;
      default: {
        const unreachable: never = record;
        throw new Error(`journal: unknown record ${JSON.stringify(unreachable)}`);
      }
    }
  }
  const interrupted: string[] = [];
  const items = [...states.values()].map((state): ItemState => {
    if (state.status !== "running") return state;
    interrupted.push(state.item.id);
    return { ...state, status: "pending" };
  });
  return { items, interrupted };
}

function stripUndefined(result: z.infer<typeof resultSchema>): ItemResult {
  const { terminal, compactions, ...rest } = result;
  return {
    ...rest,
    ...(terminal === undefined ? {} : { terminal }),
    ...(compactions === undefined ? {} : { compactions }),
  };
}

export interface LocalJournalOptions {
  /** The batch directory, `.forkloop/batches/<id>`. */
  readonly dir: string;
  readonly now?: () => Date;
  /** Put items that failed back in the queue (a new attempt each); their `failed` record stays. */
  readonly retryFailed?: boolean;
}

export const JOURNAL_FILE = "journal.log";
const LOCK_FILE = "lock";

export async function readJournal(dir: string): Promise<{ records: JournalRecord[]; tornTail: boolean }> {
  const contents = await readLog(join(dir, JOURNAL_FILE));
  const records = contents.records.map((raw, index) => {
    const parsed = journalRecordSchema.safeParse(raw);
    if (!parsed.success)
      throw new Error(`journal record ${index + 1} in ${dir} is invalid: ${parsed.error.message}`);
    return parsed.data;
  });
  return { records, tornTail: contents.tornTail };
}

export async function openLocalJournalBackend(
  options: LocalJournalOptions,
): Promise<JobBackend & { readonly interrupted: readonly string[]; readonly tornTail: boolean }> {
  const releaseLock = await acquireLock(options.dir);
  try {
    const path = join(options.dir, JOURNAL_FILE);
    const contents = await readLog(path);
    const { records, tornTail } = await readJournal(options.dir);
    const replay = replayJournal(records);
    const log = await openLog(path, contents);
    return new LocalJournalBackend(
      log,
      replay,
      tornTail,
      releaseLock,
      options.now ?? (() => new Date()),
      options.retryFailed ?? false,
    );
  } catch (error) {
    await releaseLock();
    throw error;
  }
}

class LocalJournalBackend implements JobBackend {
  readonly #states = new Map<string, ItemState>();
  readonly #queue: string[] = [];
  readonly interrupted: readonly string[];

  constructor(
    private readonly log: AppendLog,
    replay: JournalReplay,
    readonly tornTail: boolean,
    private readonly releaseLock: () => Promise<void>,
    private readonly now: () => Date,
    retryFailed: boolean,
  ) {
    this.interrupted = replay.interrupted;
    for (const state of replay.items) {
      if (retryFailed && state.status === "failed") {
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
    for (const item of fresh) {
      this.#states.set(item.id, { item, status: "pending", attempts: 0 });
      this.#queue.push(item.id);
    }
    await Promise.all(fresh.map((item) => this.log.append({ type: "enqueued", at: this.#at(), item })));
  }

  async claim(workerId: string): Promise<Claim | null> {
    const id = this.#queue.shift();
    if (id === undefined) return null;
    const state = this.#states.get(id);
    if (!state) throw new Error(`journal: queued item ${id} has no state`);
    const attempt = state.attempts + 1;
    this.#states.set(id, { ...state, status: "running", attempts: attempt });
    await this.log.append({
      type: "claimed",
      at: this.#at(),
      id,
      attempt,
      worker: workerId,
      pid: process.pid,
    });
    return { item: state.item, attempt };
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
    this.#states.set(claim.item.id, { item: state.item, attempts: state.attempts, ...definedOnly(next) });
    await this.log.append({ ...record, at: this.#at(), id: claim.item.id, attempt: claim.attempt });
    return { ok: true };
  }

  async list(): Promise<readonly ItemState[]> {
    return [...this.#states.values()];
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

/**
 * One process per batch: a second `forkloop batch --resume` while the first still runs would run
 * items twice. The lock holds the owner's pid; a lock whose pid is dead (kill -9) is taken over.
 */
async function acquireLock(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, LOCK_FILE);
  for (let tries = 0; tries < 2; tries++) {
    try {
      const handle = await open(path, "wx");
      await handle.writeFile(String(process.pid));
      await handle.sync();
      await handle.close();
      return () => rm(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = Number((await readFile(path, "utf8").catch(() => "")).trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new CliError(
          `batch ${dir} is being run by process ${owner}. Wait for it to finish, or stop it (kill ${owner}) and resume.`,
        );
      }
      await rm(path, { force: true });
    }
  }
  throw new CliError(`could not lock ${dir}: another process keeps taking the lock`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
