import { createHash } from "node:crypto";
import { join } from "node:path";
import { readIfPresent, replaceAtomically } from "@forkloop/tools/workspace";
import { z } from "zod";
import type { ItemExecutor, ItemOutcome } from "./batch-runner.js";
import type { Claim, ItemError, ItemResult, ItemState } from "./job-backend.js";
import { usageTotalsSchema } from "./local-journal-backend.js";

/**
 * R-B7: the reduce step. Once every item of the map is settled, one agent reads the succeeded
 * items' results (their `structured_output` with `--json-schema`) under the reduce prompt; its
 * answer is the batch's result. It runs as a fork of the map: the same cache-safe prefix (tools
 * → system), so its first request reads what the items wrote to the cache.
 *
 * Journaled in `reduce.json` beside the journal, replaced atomically: `running` is durable before
 * the request goes out, the answer before the batch reports it. A kill during the reduce leaves
 * `running`, and the resume runs the reduce alone (every item is settled, none runs again). A
 * finished reduce is kept while its input is the same (the prompt and every result it read, by
 * digest); a resume that changed them (`--retry-failed`, another `--reduce`) runs it again.
 */

const REDUCE_FILE = "reduce.json";
/** The reduce's agent id is `item-reduce-<attempt>`; item ids are hashes, so it never meets one. */
export const REDUCE_ID = "reduce";

/** What the report reads of a result and an error; the rest is kept as it was written. */
const resultShape = z.looseObject({
  turns: z.number(),
  usage: usageTotalsSchema,
  costUsd: z.number(),
  durationMs: z.number(),
  text: z.string(),
});
const errorShape = z.looseObject({ code: z.string(), message: z.string() });

const reduceRecordSchema = z.object({
  prompt: z.string(),
  digest: z.string(),
  attempt: z.number().int().positive(),
  status: z.enum(["running", "succeeded", "failed"]),
  at: z.string(),
  /** How many items' results it read. */
  items: z.number().int().nonnegative(),
  result: resultShape.optional(),
  error: errorShape.optional(),
});

export interface ReduceRecord {
  readonly prompt: string;
  readonly digest: string;
  readonly attempt: number;
  readonly status: "running" | "succeeded" | "failed";
  readonly at: string;
  readonly items: number;
  readonly result?: ItemResult;
  readonly error?: ItemError;
}

/** The reduce's input: every succeeded item's answer (or structured output), then the prompt. */
function reduceInput(prompt: string, states: readonly ItemState[]): { text: string; items: number } {
  const succeeded = states.filter((state) => state.status === "succeeded" && state.result !== undefined);
  const failed = states.filter((state) => state.status === "failed");
  const results = succeeded.map((state) => {
    const result = state.result!;
    const answer =
      result.structuredOutput === undefined ? result.text : JSON.stringify(result.structuredOutput);
    return `<result item=${JSON.stringify(state.item.label)}>\n${answer}\n</result>`;
  });
  const missing =
    failed.length === 0
      ? ""
      : `\n${failed.length} more item${failed.length === 1 ? "" : "s"} failed and ${failed.length === 1 ? "is" : "are"} not included: ${failed
          .slice(0, 20)
          .map((state) => state.item.label)
          .join(", ")}${failed.length > 20 ? ", …" : ""}.`;
  const text = `The batch's items have finished. Their results (${succeeded.length} of ${states.length} items):\n\n<results>\n${results.join("\n")}\n</results>${missing}\n\n${prompt}`;
  return { text, items: succeeded.length };
}

function digestOf(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The batch's reduce record, or undefined before any reduce started. */
export async function readReduce(dir: string): Promise<ReduceRecord | undefined> {
  const text = await readIfPresent(join(dir, REDUCE_FILE));
  return text === undefined ? undefined : parseReduceRecord(text);
}

/**
 * A reduce record from its JSON text; undefined when it does not parse. A damaged record costs
 * one reduce again, never the items: it is read as "not run".
 */
export function parseReduceRecord(text: string): ReduceRecord | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = reduceRecordSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const { result, error, ...rest } = parsed.data;
  return {
    ...rest,
    ...(result === undefined ? {} : { result: result as ItemResult }),
    ...(error === undefined ? {} : { error: error as ItemError }),
  };
}

/**
 * R-B7, R-B1: a second place the reduce is journaled — a queued batch's Redis, so the producer
 * that re-attaches from another host finds a finished reduce (kept) or an interrupted one (run
 * again, once) as the one on this host would. Written after reduce.json each time.
 */
export interface ReduceJournalMirror {
  read(): Promise<ReduceRecord | undefined>;
  write(record: ReduceRecord): Promise<void>;
  /**
   * R-B7, R-B1: the claim on running the reduce, for producers on several hosts that reach it at
   * the same moment — taken before `running` is written, held (renewed) until the answer is;
   * undefined while another producer holds it. That one's outcome is waited for, never a second
   * request sent; a claim whose holder died expires, and the next producer runs the reduce.
   */
  claim?(): Promise<ReduceLease | undefined>;
  /** How often a producer waiting on another's claim reads the record again (ms; default 500). */
  readonly pollMs?: number;
}

/** A held claim on running the reduce. */
export interface ReduceLease {
  /** Aborted when the claim was not renewed in time and may be another producer's now. */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

/** The later of two records of one batch's reduce: the higher attempt, a finished one over `running`. */
function laterRecord(a: ReduceRecord | undefined, b: ReduceRecord | undefined): ReduceRecord | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  if (a.attempt !== b.attempt) return a.attempt > b.attempt ? a : b;
  return a.status === "running" ? b : a;
}

/**
 * Whether `current` is a finished reduce of this input that another producer wrote since
 * `previous` was read: its outcome stands for this producer too (nothing is sent again).
 */
function finishedSince(
  previous: ReduceRecord | undefined,
  current: ReduceRecord | undefined,
  digest: string,
): current is ReduceRecord {
  if (current === undefined || current.digest !== digest || current.status === "running") return false;
  if (previous === undefined) return true;
  return (
    current.attempt > previous.attempt ||
    (current.attempt === previous.attempt && previous.status === "running")
  );
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

type Claimed =
  | {
      readonly kind: "claimed";
      readonly lease: ReduceLease | undefined;
      readonly previous: ReduceRecord | undefined;
    }
  | { readonly kind: "settled"; readonly record: ReduceRecord }
  | { readonly kind: "interrupted" };

/**
 * R-B7, R-B1: takes the mirror's claim on running the reduce (no claim to take without one),
 * waiting while another producer holds it — until that one's outcome is written (it stands), or
 * its claim expires (its holder died; this one runs it).
 */
async function claimReduce(
  mirror: ReduceJournalMirror | undefined,
  previous: ReduceRecord | undefined,
  digest: string,
  signal: AbortSignal | undefined,
  log: ((line: string) => void) | undefined,
): Promise<Claimed> {
  if (mirror?.claim === undefined) return { kind: "claimed", lease: undefined, previous };
  let said = false;
  for (;;) {
    const lease = await mirror.claim();
    const current = await mirror.read();
    if (finishedSince(previous, current, digest)) {
      await lease?.release();
      return { kind: "settled", record: current };
    }
    if (lease !== undefined) return { kind: "claimed", lease, previous: laterRecord(previous, current) };
    if (!said) {
      log?.("reduce: another producer of this batch is running it: waiting for its outcome");
      said = true;
    }
    await pause(mirror.pollMs ?? 500, signal);
    if (signal?.aborted) return { kind: "interrupted" };
  }
}

function writeReduce(dir: string, record: ReduceRecord): Promise<void> {
  return replaceAtomically(join(dir, REDUCE_FILE), `${JSON.stringify(record, null, 2)}\n`);
}

/** Whether the reduce `prompt` still has to run over these states (no finished answer for this input). */
export async function reduceDue(dir: string, prompt: string, states: readonly ItemState[]): Promise<boolean> {
  const previous = await readReduce(dir);
  return !(
    previous?.status === "succeeded" && previous.digest === digestOf(reduceInput(prompt, states).text)
  );
}

export type ReduceOutcome =
  /**
   * A finished reduce of the same input — an earlier run's, or the one another producer ran while
   * this one waited on its claim (succeeded or failed): it stands, nothing was sent.
   */
  | { readonly kind: "kept"; readonly record: ReduceRecord }
  | { readonly kind: "ran"; readonly record: ReduceRecord }
  /** Stopped by an interrupt: `running` stays in reduce.json, so a resume runs it again. */
  | { readonly kind: "interrupted"; readonly record: ReduceRecord };

/**
 * Runs the reduce `prompt` over the settled `states` with `executor` (one built on the map's
 * prefix, without `--json-schema`: the reduce answers in prose), journaled in `dir`.
 */
export async function runReduce(options: {
  readonly dir: string;
  readonly prompt: string;
  readonly states: readonly ItemState[];
  readonly executor: ItemExecutor;
  readonly signal?: AbortSignal;
  readonly now?: () => Date;
  /** R-B1: a queued batch's reduce is journaled in Redis too, read back by any host's producer. */
  readonly mirror?: ReduceJournalMirror;
  /** Said while waiting on another producer's claim, or when this one's claim was lost. */
  readonly log?: (line: string) => void;
}): Promise<ReduceOutcome> {
  const now = options.now ?? (() => new Date());
  const input = reduceInput(options.prompt, options.states);
  const digest = digestOf(input.text);
  const local = await readReduce(options.dir);
  const read = laterRecord(local, await options.mirror?.read());
  const write = async (record: ReduceRecord) => {
    await writeReduce(options.dir, record);
    await options.mirror?.write(record);
  };
  if (read?.status === "succeeded" && read.digest === digest) {
    // Finished on another host: this host's reduce.json says so too (`batch status`).
    if (read !== local) await writeReduce(options.dir, read);
    return { kind: "kept", record: read };
  }
  const started: ReduceRecord = {
    prompt: options.prompt,
    digest,
    attempt: (read?.attempt ?? 0) + 1,
    status: "running",
    at: now().toISOString(),
    items: input.items,
  };
  const claimed = await claimReduce(options.mirror, read, digest, options.signal, options.log);
  if (claimed.kind === "interrupted") return { kind: "interrupted", record: read ?? started };
  if (claimed.kind === "settled") {
    await writeReduce(options.dir, claimed.record);
    return { kind: "kept", record: claimed.record };
  }
  try {
    return await runClaimed(
      { ...started, attempt: (claimed.previous?.attempt ?? 0) + 1 },
      { ...options, write, now, text: input.text, lost: claimed.lease?.lost },
    );
  } finally {
    await claimed.lease?.release();
  }
}

/** The reduce under this producer's claim: `running` written, the request sent, its outcome written. */
async function runClaimed(
  started: ReduceRecord,
  options: {
    readonly executor: ItemExecutor;
    readonly signal?: AbortSignal | undefined;
    readonly now: () => Date;
    readonly text: string;
    readonly write: (record: ReduceRecord) => Promise<void>;
    readonly lost: AbortSignal | undefined;
    readonly log?: ((line: string) => void) | undefined;
  },
): Promise<ReduceOutcome> {
  const { now, write } = options;
  await write(started);
  const claim: Claim = {
    item: { id: REDUCE_ID, label: "reduce", prompt: options.text },
    attempt: started.attempt,
  };
  const [execution] = options.executor.startAll([claim], false);
  if (execution === undefined) throw new Error("the executor started no reduce");
  const cancel = () => execution.cancel("interrupted");
  // Its claim lost (this host stalled past the lease): another producer may run it, so this stops.
  const lost = () => {
    options.log?.("reduce: this producer's claim on it expired (another may run it now): stopped");
    cancel();
  };
  if (options.signal?.aborted) cancel();
  if (options.lost?.aborted) lost();
  options.signal?.addEventListener("abort", cancel, { once: true });
  options.lost?.addEventListener("abort", lost, { once: true });
  try {
    const outcome = await execution.result.catch(
      (error: unknown): ItemOutcome => ({
        ok: false,
        error: { code: "executor_error", message: error instanceof Error ? error.message : String(error) },
      }),
    );
    if (outcome.ok === "cancelled") return { kind: "interrupted", record: started };
    const record: ReduceRecord =
      outcome.ok === true
        ? { ...started, status: "succeeded", at: now().toISOString(), result: outcome.result }
        : {
            ...started,
            status: "failed",
            at: now().toISOString(),
            error: outcome.error,
            ...(outcome.result === undefined ? {} : { result: outcome.result }),
          };
    await write(record);
    return { kind: "ran", record };
  } finally {
    options.signal?.removeEventListener("abort", cancel);
    options.lost?.removeEventListener("abort", lost);
  }
}
