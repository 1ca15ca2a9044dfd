/**
 * R-V5: every instrument forkloop records. GenAI semantic-convention names where one exists
 * (gen_ai.client.token.usage, gen_ai.client.operation.duration), forkloop.* for the rest,
 * shaped like Claude Code's claude_code.* metrics (token usage by `type`, cost in USD).
 */
export const METRICS = {
  /** Semconv: tokens per model request, `gen_ai.token.type` input (all input, cache included) or output. */
  tokenHistogram: {
    name: "gen_ai.client.token.usage",
    kind: "histogram",
    unit: "{token}",
    description: "Tokens used per model request",
  },
  /** Semconv: a model request's duration, retries included. */
  operationDuration: {
    name: "gen_ai.client.operation.duration",
    kind: "histogram",
    unit: "s",
    description: "Duration of a model request",
  },
  /** Tokens by kind: `type` input | output | cacheRead | cacheCreation (Claude Code's values). */
  tokens: { name: "forkloop.token.usage", kind: "counter", unit: "{token}", description: "Tokens by kind" },
  cost: { name: "forkloop.cost.usage", kind: "counter", unit: "USD", description: "Cost of model requests" },
  /** Per request: cache-read input tokens over all input tokens (0–1). */
  cacheReadShare: {
    name: "forkloop.cache.read_share",
    kind: "histogram",
    unit: "1",
    description: "Share of a request's input tokens read from the prompt cache",
  },
  /** Retries: `kind` api (a model request retried) or item (a batch item run again). */
  retries: { name: "forkloop.retries", kind: "counter", unit: "{retry}", description: "Retries" },
  /** Batch items by `status`: succeeded | failed | cancelled. */
  items: {
    name: "forkloop.batch.items",
    kind: "counter",
    unit: "{item}",
    description: "Batch items by status",
  },
} as const;

export type MetricSpec = (typeof METRICS)[keyof typeof METRICS];

/** The worker pool's occupancy, observed when metrics are collected. */
export const POOL_GAUGES = {
  threads: { name: "forkloop.pool.threads", unit: "{thread}", description: "Worker threads started" },
  running: { name: "forkloop.pool.running", unit: "{agent}", description: "Sub-agents running in the pool" },
  queued: { name: "forkloop.pool.queued", unit: "{agent}", description: "Sub-agents waiting for a thread" },
} as const;
