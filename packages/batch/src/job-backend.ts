/**
 * The narrow interface `forkloop batch` runs through (R-B1). Its producer half,
 * `BatchLedger`, is what every backend keeps — the items, whether enqueueing finished, which items
 * an earlier run left unsettled, every item's state — and `enqueueOnce` (batch-enqueue.ts) runs on
 * it alike for the local journal and for the BullMQ backend. `JobBackend` adds the claiming half
 * (claim, heartbeat, side effects, complete, fail) that `runBatch` drives; on a queue BullMQ's own
 * Worker does that part (locks, stalled recovery), so the BullMQ backend is a `BatchLedger`.
 */

import type { UsageTotals } from "@forkloop/loop-core";

/** One unit of work: the prompt is rendered at enqueue time so a resume needs no template. */
export interface JobItem {
  readonly id: string;
  /** What the user recognises: the file path or `items.jsonl:12`. */
  readonly label: string;
  readonly prompt: string;
}

/** What one finished attempt produced, successful or not (expected failures are data). */
export interface ItemResult {
  readonly turns: number;
  /** Its tokens and API calls: loop-core's one usage type. */
  readonly usage: UsageTotals;
  readonly costUsd: number;
  /** R-B8: with `--api batches`, what the same tokens would have cost online (`costUsd` is at batch prices). */
  readonly onlineCostUsd?: number;
  readonly durationMs: number;
  /** The loop's terminal reason, when the loop ran to an end. */
  readonly terminal?: string;
  /** The final assistant text (what the item produced). */
  readonly text: string;
  /** R-R1, R-R2: model requests retried (a dropped stream, a 529, a deadline) on the way. */
  readonly apiRetries?: number;
  /** The item's compactions in order, each with its tokens before and after (R-C4). */
  readonly compactions?: readonly ItemCompaction[];
  /** R-B6: with `--json-schema`, the final answer parsed and validated against the schema. */
  readonly structuredOutput?: unknown;
  /** R-B3: with isolation, the workspace paths this item's change wrote (merged) or deleted. */
  readonly applied?: readonly string[];
}

export interface ItemCompaction {
  readonly trigger: string;
  readonly preTokens: number;
  readonly postTokens: number;
}

export interface ItemError {
  readonly code: string;
  readonly message: string;
  /** R-B4: code `conflict` — what could not be merged, and where the item's diff is kept. */
  readonly conflict?: ItemConflict;
}

export interface ItemConflict {
  readonly files: readonly { readonly path: string; readonly reason: string }[];
  /** The item's whole change as a patch (`git apply --3way PATCH` once the lines are sorted out). */
  readonly patch: string;
  /** The item's copy of the project, kept for a look. */
  readonly workspace?: string;
}

/** A lease on one item: completing or failing needs the attempt that was claimed. */
export interface Claim {
  readonly item: JobItem;
  /** 1 for the first run, 2 after an interrupted one was reclaimed, … */
  readonly attempt: number;
  /** R-B2: the item's own copy of the project, where it works (with isolation). */
  readonly workspace?: string;
  /** R-V5: the W3C trace context the item's span hangs from (the batch's span, maybe on another host). */
  readonly traceparent?: string;
}

/** R-B3: an apply the journal recorded as started and never settled (kill -9 part-way). */
export interface PendingApply {
  readonly claim: Claim;
  /** The plan's directory, relative to the batch directory. */
  readonly plan: string;
  /** The result the item settles with once the plan is carried out. */
  readonly result: ItemResult;
}

/** R-B3: one item of a group apply, and the result it settles with. */
export interface ApplyingMember {
  readonly claim: Claim;
  readonly result: ItemResult;
}

export type ItemStatus = "pending" | "running" | "succeeded" | "failed";

/** An earlier attempt was interrupted after it started a tool that changes things. */
export interface RepeatedSideEffect {
  readonly attempt: number;
  /** The first such tool of that attempt (e.g. `Edit`, `Bash`). */
  readonly tool: string;
}

export interface ItemState {
  readonly item: JobItem;
  readonly status: ItemStatus;
  readonly attempts: number;
  readonly result?: ItemResult;
  readonly error?: ItemError;
  /**
   * Attempts that were interrupted after a mutating tool call began. The item was (or
   * will be) redone from scratch, so those side effects may have happened twice.
   */
  readonly mayHaveRunTwice?: readonly RepeatedSideEffect[];
}

export type SettleOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** R-B1: recorded once every item of a batch is enqueued (their count and ids' digest). */
export interface EnqueueSeal {
  readonly items: number;
  readonly digest: string;
}

export interface BatchLedger {
  /** Where the items are kept, for messages: the journal's path, or the queue's URL and batch. */
  readonly location: string;
  /** Adds items; an id already known is left as it is (so enqueueing again is harmless). */
  enqueue(items: readonly JobItem[]): Promise<void>;
  /**
   * The seal of a finished enqueue: undefined when enqueueing never finished (a crash part-way),
   * "unverifiable" when it was written before seals carried the item count.
   */
  enqueueSeal(): Promise<EnqueueSeal | "unverifiable" | undefined>;
  /** Records, durably and after the items themselves, that every item is enqueued. */
  sealEnqueue(seal: EnqueueSeal): Promise<void>;
  /**
   * Items an earlier run started and never settled ("interrupted on resume"): run again from
   * scratch by the next claim (local), or once their lock expires (queue).
   */
  interrupted(): Promise<readonly string[]>;
  list(): Promise<readonly ItemState[]>;
  close(): Promise<void>;
}

export interface JobBackend extends BatchLedger {
  /** The next pending item, now running under a new attempt; null when none is left to claim. */
  claim(workerId: string): Promise<Claim | null>;
  /** Says the claim is still alive (a distributed backend re-queues claims whose heartbeats stop). */
  heartbeat(claim: Claim): Promise<void>;
  /**
   * The attempt is about to run a tool that changes things (Edit, Write, a mutating
   * Bash). Durable before it resolves, so an interrupted attempt's side effects are known on
   * resume; recorded once per attempt.
   */
  recordSideEffect(claim: Claim, tool: string): Promise<void>;
  /**
   * R-B3: the item's change is about to be written into the workspace from the plan in `plan`
   * (durable already). Durable before it resolves: a resume finishes that plan and settles the
   * item with `result` instead of running it again. Backends without isolation leave it out.
   */
  recordApplying?(claim: Claim, plan: string, result: ItemResult): Promise<void>;
  /**
   * R-B3: as `recordApplying`, for several items whose changes are written from one plan — one
   * durable record for all of them, so a resume finishes the plan for every member or none.
   */
  recordApplyingGroup?(members: readonly ApplyingMember[], plan: string): Promise<void>;
  /** R-B3: the applies an earlier run started and never settled; those items are held for them. */
  pendingApplies?(): Promise<readonly PendingApply[]>;
  /** Records success durably before resolving; refuses an item that is already finished. */
  complete(claim: Claim, result: ItemResult): Promise<SettleOutcome>;
  /** Records failure durably before resolving; refuses an item that is already finished. */
  fail(claim: Claim, error: ItemError, result?: ItemResult): Promise<SettleOutcome>;
}
