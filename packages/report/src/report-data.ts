/**
 * The JSON a report page carries: plain data built in Node (agent-view.ts, batch-data.ts) and
 * read by the page's script (src/page). Times are epoch milliseconds; `null` where the transcript
 * has no figure (one written before timing records existed, or a run that was cut off).
 */

export interface TokenCounts {
  readonly input: number;
  readonly cacheWrite: number;
  readonly cacheRead: number;
  readonly output: number;
}

export type RequestOutcome = "reply" | "api_error" | "withheld" | "fallback" | "aborted";

/** One model request of an agent. */
export interface RequestView {
  readonly startedAt: number | null;
  readonly firstTokenAt: number | null;
  readonly endedAt: number | null;
  readonly model: string;
  readonly outcome: RequestOutcome;
  /** From the reply's usage; null when no reply came back. */
  readonly tokens: TokenCounts | null;
  readonly costUsd: number;
  readonly retries: readonly { readonly at: number; readonly attempt: number; readonly error: string }[];
  readonly fallbackTo: string | null;
  readonly error: string | null;
}

export interface ToolCallView {
  readonly id: string;
  readonly name: string;
  /** Index into the agent's `requests` of the reply that asked for the call. */
  readonly request: number;
  readonly startedAt: number | null;
  readonly endedAt: number | null;
  readonly status: "ok" | "error" | "pending";
  /** A short one-line view of the input (the full input is in the messages). */
  readonly summary: string;
}

/** A compaction (or snip / microcompact) boundary in an agent's history. */
export interface MarkerView {
  readonly kind: "compact_boundary" | "snip_boundary" | "microcompact_boundary";
  readonly at: number | null;
  /** How many of the agent's requests came before the boundary. */
  readonly afterRequest: number;
  readonly trigger: string | null;
  readonly preTokens: number | null;
  readonly postTokens: number | null;
  /** The boundary's own words, e.g. "Cleared 3 old tool results (~1,966 tokens)" (a microcompact has no pre/post figures). */
  readonly detail: string;
}

export type BlockView =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "thinking"; readonly text: string }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: string }
  | {
      readonly type: "tool_result";
      readonly toolUseId: string;
      readonly isError: boolean;
      readonly content: readonly BlockView[];
    }
  /** `data` is base64 of a raster image, or null when it was left out (too large, or not raster). */
  | {
      readonly type: "image";
      readonly mediaType: string;
      readonly data: string | null;
      readonly bytes: number;
    }
  | { readonly type: "other"; readonly label: string };

export interface MessageView {
  readonly uuid: string;
  readonly role: "user" | "assistant" | "system";
  readonly at: number | null;
  /** e.g. `meta`, `api error`, `compact_boundary`, `abandoned (fallback)`. */
  readonly note: string | null;
  readonly blocks: readonly BlockView[];
}

export interface ContextLimitsView {
  readonly contextWindow: number;
  readonly autoCompact: number;
  readonly blockingLimit: number;
}

/** One agent (the main session or a fork) with everything the page draws for it. */
export interface AgentView {
  readonly id: string;
  readonly parentId: string | null;
  readonly querySource: string;
  /** What the user recognises: the Agent call's description, `compact`, the batch item's label. */
  readonly label: string;
  readonly model: string;
  readonly status: string;
  /** Why the transcript could not be read whole (missing file, torn tail), or null. */
  readonly problem: string | null;
  readonly createdAt: number | null;
  readonly endedAt: number | null;
  readonly turns: number;
  readonly tokens: TokenCounts;
  readonly costUsd: number;
  /** Share of the first request's input read from the cache: for a fork, the parent's prefix. */
  readonly firstRequestCacheShare: number | null;
  readonly limits: ContextLimitsView | null;
  readonly requests: readonly RequestView[];
  readonly tools: readonly ToolCallView[];
  readonly markers: readonly MarkerView[];
  readonly rateLimits: readonly { readonly at: number; readonly until: number }[];
  /** Messages a fork started with (the parent's history), counted but not shown. */
  readonly inheritedMessages: number;
  readonly messages: readonly MessageView[];
  /** True when message text was cut to keep the page small. */
  readonly messagesCut: boolean;
  /** True when the transcript has request records (start, first token, end). */
  readonly timed: boolean;
}

export interface SessionReportData {
  readonly kind: "session";
  readonly generatedAt: string;
  readonly title: string;
  /** The main agent first; each fork names its parent. */
  readonly agents: readonly AgentView[];
}

export interface BatchItemRow {
  readonly id: string;
  readonly label: string;
  readonly status: "pending" | "succeeded" | "failed";
  readonly attempts: number;
  readonly turns: number;
  readonly tokens: TokenCounts;
  readonly costUsd: number;
  readonly durationMs: number;
  readonly compactions: number;
  /** Model requests answered (the usage's API calls). */
  readonly apiCalls: number;
  /** Model requests retried on the way (R-R1, R-R2). */
  readonly apiRetries: number;
  readonly terminal: string | null;
  /** The start of the answer (the whole answer is in the item's messages). */
  readonly answer: string;
  /** R-B6 `--json-schema`: the item's structured output as JSON text (its start), null without one. */
  readonly structuredOutput: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  /** Every attempt's claim → settle (or last heartbeat) time, for the concurrency chart. */
  readonly runs: readonly { readonly startedAt: number; readonly endedAt: number | null }[];
  /** The item's sub-agent, when its transcript exists. */
  readonly session: AgentView | null;
}

/** R-B7: the batch's reduce step — its answer is the batch's result. */
export interface BatchReduceView {
  readonly prompt: string;
  /** `running`: started and not finished (a resume runs it). */
  readonly status: "running" | "succeeded" | "failed";
  /** How many items' results it read. */
  readonly items: number;
  readonly text: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly turns: number;
  readonly tokens: TokenCounts;
  readonly costUsd: number;
}

export interface BatchReportData {
  readonly kind: "batch";
  readonly generatedAt: string;
  readonly batchId: string;
  readonly model: string | null;
  readonly prompt: string | null;
  readonly wallMs: number;
  readonly items: readonly BatchItemRow[];
  /** Pool-wide 429 pauses, merged where they overlap. */
  readonly pauses: readonly { readonly at: number; readonly until: number }[];
  /** R-B7: the reduce, when the batch has one. */
  readonly reduce: BatchReduceView | null;
}

export type ReportData = SessionReportData | BatchReportData;
