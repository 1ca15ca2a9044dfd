import type { QueueWorkerEvent } from "./queue-worker.js";
import type { WorkerPolicy } from "./worker-policy.js";

/**
 * A queue worker's event as its log line (`forkloop worker` writes them to stderr): each item's
 * end and retry, rate limits, refused batches and jobs, Redis errors. Undefined for an event
 * that is not logged (a host failure stops the worker, which says why).
 */
export function describeWorkerEvent(event: QueueWorkerEvent, queue: string): string | undefined {
  switch (event.type) {
    case "item_settled": {
      const status = event.outcome.ok ? "ok    " : "FAILED";
      const detail = event.outcome.ok ? "" : ` ${event.outcome.error.code}: ${event.outcome.error.message}`;
      const duplicate = event.recorded ? "" : " (already recorded by another run: dropped)";
      return `${status} ${event.batchId} ${event.claim.item.label} (attempt ${event.claim.attempt})${detail}${duplicate}`;
    }
    case "item_retry":
      return `retry  ${event.batchId} ${event.claim.item.label}: ${event.error.code}: ${event.error.message}`;
    case "rate_limited":
      return `rate limited (429 on ${event.claim.item.label}): pausing the queue for ${event.retryAfterMs} ms on every host`;
    case "request_limited":
      return `batch ${event.batchId}: at its limit of ${event.rpm} requests/min (all hosts together): requests wait, the next in ${Math.ceil(event.waitMs / 1000)} s`;
    case "batch_refused":
      return `batch ${event.batchId}: not served here, its items fail: ${event.error.message}`;
    case "job_refused":
      return `${event.reason}; it fails`;
    case "error":
      return `redis ${queue}: ${event.message}`;
    case "host_failure":
      return undefined;
  }
}

/** What a worker says at its start about its policy (undefined when bypassPermissions batches are refused). */
export function workerPolicyNotice(policy: WorkerPolicy): string | undefined {
  if (!policy.allowBypassPermissions) return undefined;
  return policy.bypassDisabledBySettings
    ? "--allow-dangerously-skip-permissions has no effect: this host's settings disable bypassPermissions"
    : "bypassPermissions batches run here: their tool calls run unasked (this host's deny rules and sandbox still hold)";
}
