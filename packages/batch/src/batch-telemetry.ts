import { activeSink, METRICS, OpenSpan, parseTraceparent } from "@forkloop/orchestrator/telemetry";
import type { ItemOutcome } from "./batch-runner.js";
import type { Claim } from "./job-backend.js";

/**
 * R-V5: a batch's spans. The batch span is where its items hang from: in this process, or, for
 * a queued batch, across hosts — its W3C trace context rides in each item's job data, so a
 * worker's item span is the producer's batch span's child. Nothing is recorded with telemetry off.
 */
export function startBatchSpan(batchId: string, mode: "local" | "queue"): OpenSpan | undefined {
  const sink = activeSink();
  if (sink === undefined) return undefined;
  return new OpenSpan(sink, `batch ${batchId}`, {
    attributes: { "forkloop.batch.id": batchId, "forkloop.batch.mode": mode },
  });
}

/** A claim that hangs from `span` unless it already carries a trace context (a queued item's). */
export function withTraceContext(claim: Claim, span: OpenSpan | undefined): Claim {
  if (span === undefined || claim.traceparent !== undefined) return claim;
  return { ...claim, traceparent: span.traceparent };
}

/** An item's span, child of its claim's trace context; `end` records its status as a metric too. */
export function startItemSpan(claim: Claim) {
  const sink = activeSink();
  if (sink === undefined) return undefined;
  const span = new OpenSpan(sink, "batch_item", {
    parent: parseTraceparent(claim.traceparent),
    attributes: { "forkloop.batch.item.id": claim.item.id, "forkloop.batch.item.attempt": claim.attempt },
  });
  // A second attempt is a retry of the item (its earlier run was interrupted or failed).
  if (claim.attempt > 1) sink.metric({ name: METRICS.retries.name, value: 1, attributes: { kind: "item" } });
  return {
    traceparent: span.traceparent,
    end(outcome: ItemOutcome) {
      const status = outcome.ok === true ? "succeeded" : outcome.ok === false ? "failed" : "cancelled";
      sink.metric({ name: METRICS.items.name, value: 1, attributes: { status } });
      span.end(outcome.ok === false ? { error: outcome.error.message } : "ok", {
        "forkloop.batch.item.status": status,
        ...(outcome.ok === false ? { "error.type": outcome.error.code } : {}),
        ...(outcome.ok === "cancelled" || outcome.result === undefined
          ? {}
          : { "forkloop.cost_usd": outcome.result.costUsd }),
      });
    },
  };
}
