import { join } from "node:path";
import type { WorkspaceIsolation } from "@forkloop/tools/workspace";
import { z } from "zod";
import { openLog, readLog } from "./append-log.js";
import type { ItemOutcome } from "./batch-runner.js";
import { type ApplyJournal, isolateItems } from "./item-isolation.js";
import type { Claim, ItemState, PendingApply } from "./job-backend.js";
import {
  itemErrorSchema,
  itemResultSchema,
  jobItemSchema,
  stripUndefined,
  stripUndefinedError,
} from "./local-journal-backend.js";
import { decodeChanges } from "./queued-change.js";

type Settled = Exclude<ItemOutcome, { ok: "cancelled" }>;

/**
 * R-B1, R-B2, R-B3: the producer's half of an isolated queued batch. Workers return each item's
 * change with its result; the producer applies it to its own tree exactly once, the way a local
 * batch applies its items' — merged under one lock, the plan durable and named in the journal
 * (`applying`; `applying_group` for the changes that waited for the same turn of the lock,
 * applied from one plan) before the first write, the outcome (`settled`) recorded after — so a
 * producer killed between the two finishes that plan when it re-attaches instead of applying it again.
 * The journal is the producer's batch directory's `applies.log`: the tree it changes is this
 * host's, so a producer re-attached on another host applies every change to its own tree once.
 */
export interface QueuedApplier {
  /** The item's state once its change is in the tree (or kept aside as a conflict); once per item. */
  settle(state: ItemState): Promise<ItemState>;
  /**
   * R-B4 `--retry-conflicts`: the items whose change was a conflict begin a retry round on the
   * tree as it is now (a commit of it, the base their new runs start from); the journal names the
   * round before anything else happens, and that record supersedes their conflict — once: the
   * round's items are no conflict any more, so a second call does not take them again. Undefined
   * when there is no conflict to retry.
   */
  retryConflicts(): Promise<JournaledRetry | undefined>;
  /** R-B4: the last retry round the journal names (a re-attach finishes putting it on the queue). */
  lastRetry(): JournaledRetry | undefined;
  /** What `settle` made of the item so far, without applying anything (Redis lost the batch). */
  known(state: ItemState): ItemState;
  close(): Promise<void>;
}

export const APPLIES_LOG = "applies.log";

/** R-B4: a retry round as the journal names it: its number, its base, its items by id. */
export interface JournaledRetry {
  readonly round: number;
  readonly base: string;
  readonly ids: readonly string[];
}

const settledSchema = z.union([
  z.object({ ok: z.literal(true), result: itemResultSchema }),
  z.object({ ok: z.literal(false), error: itemErrorSchema, result: itemResultSchema.optional() }),
]);
const recordSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("applying"),
    item: jobItemSchema,
    attempt: z.number().int(),
    plan: z.string(),
    result: itemResultSchema,
  }),
  // R-B3: several items' changes applied from one plan under one lock turn, named before its first write.
  z.object({
    type: z.literal("applying_group"),
    plan: z.string(),
    members: z
      .array(z.object({ item: jobItemSchema, attempt: z.number().int(), result: itemResultSchema }))
      .min(1),
  }),
  z.object({ type: z.literal("settled"), id: z.string(), outcome: settledSchema }),
  z.object({
    type: z.literal("retry"),
    round: z.number().int().min(1),
    base: z.string().regex(/^[0-9a-f]{40,64}$/),
    ids: z.array(z.string()).min(1),
  }),
]);

function settledOf(outcome: z.infer<typeof settledSchema>): Settled {
  if (outcome.ok) return { ok: true, result: stripUndefined(outcome.result) };
  return {
    ok: false,
    error: stripUndefinedError(outcome.error),
    ...(outcome.result === undefined ? {} : { result: stripUndefined(outcome.result) }),
  };
}

function isConflict(outcome: Settled): boolean {
  return outcome.ok === false && outcome.error.code === "conflict";
}

function stateOf(state: ItemState, outcome: Settled): ItemState {
  const { error: _error, result: _result, ...rest } = state;
  return outcome.ok
    ? { ...rest, status: "succeeded", result: outcome.result }
    : {
        ...rest,
        status: "failed",
        error: outcome.error,
        ...(outcome.result === undefined ? {} : { result: outcome.result }),
      };
}

/**
 * Opens the batch's apply journal in `dir` and finishes the applies a killed producer left.
 * `readChange`: the change a worker recorded for the item (queue-store `readChange`).
 */
export async function openQueuedApplier(options: {
  readonly dir: string;
  readonly isolation: WorkspaceIsolation;
  readonly readChange: (itemId: string) => Promise<string | null>;
  readonly home?: string;
  /** How a conflict says to run the item again (`isolateItems`' `retry`); null: by hand only. */
  readonly retry?: string | null;
}): Promise<QueuedApplier> {
  const path = join(options.dir, APPLIES_LOG);
  const contents = await readLog(path);
  const settled = new Map<string, Settled>();
  const applying = new Map<string, PendingApply>();
  let lastRetry: JournaledRetry | undefined;
  for (const raw of contents.records) {
    const record = recordSchema.parse(raw);
    if (record.type === "retry") {
      // Superseded: the round's items are settled again by their new results.
      for (const id of record.ids) settled.delete(id);
      lastRetry = { round: record.round, base: record.base, ids: record.ids };
    } else if (record.type === "settled") {
      settled.set(record.id, settledOf(record.outcome));
      applying.delete(record.id);
    } else {
      const members = record.type === "applying" ? [record] : record.members;
      for (const member of members)
        applying.set(member.item.id, {
          claim: { item: member.item, attempt: member.attempt },
          plan: record.plan,
          result: stripUndefined(member.result),
        });
    }
  }
  const log = await openLog(path, contents);
  const isolator = isolateItems(options.isolation, options.dir, options.home, options.retry ?? null);
  const journal: ApplyJournal = {
    recordApplying: (claim, plan, result) =>
      log.append({ type: "applying", item: claim.item, attempt: claim.attempt, plan, result }),
    recordApplyingGroup: (members, plan) =>
      log.append({
        type: "applying_group",
        plan,
        members: members.map(({ claim, result }) => ({ item: claim.item, attempt: claim.attempt, result })),
      }),
  };
  const recorder = (claim: Claim) => async (outcome: Settled) => {
    await log.append({ type: "settled", id: claim.item.id, outcome });
    settled.set(claim.item.id, outcome);
  };
  // A plan written and never named is removed; one named and never settled is finished now —
  // every member recorded before any is released: a group's members share one plan, which the
  // first member's release removes, or the last one recovered (a kill in between finds it on the
  // next re-attach).
  const pending = [...applying.values()];
  await isolator.begin(pending);
  const recovered: Settled[] = [];
  for (const apply of pending) recovered.push(await isolator.recover(apply, recorder(apply.claim)));
  for (const [index, apply] of pending.entries()) await isolator.release(apply.claim, recovered[index]!);

  const inFlight = new Map<string, Promise<ItemState>>();
  const apply = async (state: ItemState): Promise<ItemState> => {
    const { result } = state;
    if (result === undefined) return state;
    const claim: Claim = { item: state.item, attempt: state.attempts };
    const record = recorder(claim);
    const text = await options.readChange(state.item.id);
    let outcome: Settled;
    if (text === null) {
      // Nothing returned (an item that changed nothing returns an empty change, so this one was
      // recorded by a worker that did not isolate it): nothing to apply.
      outcome = { ok: true, result };
      await record(outcome);
      return stateOf(state, outcome);
    }
    let changes: ReturnType<typeof decodeChanges>;
    try {
      changes = decodeChanges(text);
    } catch (error) {
      outcome = {
        ok: false,
        error: { code: "invalid_change", message: (error as Error).message },
        result,
      };
      await record(outcome);
      return stateOf(state, outcome);
    }
    outcome = await isolator.applyReturned(claim, result, changes, journal, record);
    await isolator.release(claim, outcome);
    return stateOf(state, outcome);
  };

  return {
    settle(state) {
      if (state.status !== "succeeded") return Promise.resolve(state);
      const done = settled.get(state.item.id);
      if (done !== undefined) return Promise.resolve(stateOf(state, done));
      let running = inFlight.get(state.item.id);
      if (running === undefined) {
        running = apply(state).finally(() => inFlight.delete(state.item.id));
        inFlight.set(state.item.id, running);
      }
      return running;
    },
    async retryConflicts() {
      const ids = [...settled].filter(([, outcome]) => isConflict(outcome)).map(([id]) => id);
      if (ids.length === 0) return undefined;
      const { base } = await options.isolation.rebase();
      if (base === undefined) throw new Error("a queued batch's isolation has no base commit");
      const round: JournaledRetry = { round: (lastRetry?.round ?? 0) + 1, base, ids };
      await log.append({ type: "retry", ...round });
      for (const id of ids) settled.delete(id);
      lastRetry = round;
      return round;
    },
    lastRetry: () => lastRetry,
    known(state) {
      const done = settled.get(state.item.id);
      return state.status === "succeeded" && done !== undefined ? stateOf(state, done) : state;
    },
    close: () => log.close(),
  };
}
