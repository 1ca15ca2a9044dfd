import type { BatchOptions } from "./batches.js";
import type { AppliedEdit } from "./context-edits-schema.js";
import type { FaultKind, FaultRequest, FaultSpec } from "./faults.js";
import type { FileOptions } from "./files.js";
import type { LatencyModel } from "./latency.js";
import type { ModelSpec } from "./model-registry.js";
import type { RateLimits } from "./rate-limiter.js";
import type { MessagesRequest } from "./request-schema.js";
import type { Scenario } from "./scenario.js";
import type { WebFixtures } from "./server-tools.js";

/** Options of {@link startSimulator}. Every field has a test-friendly default. */
export interface SimulatorOptions {
  /** Default 0 = a random free port. */
  port?: number;
  /** The address it listens on: 127.0.0.1 unless a test's network hosts must reach it. */
  host?: string;
  /** Default: the built-in policy brain. */
  brain?: Brain;
  /** Alternative to `brain`: a parsed scenario (see `loadScenario`). */
  scenario?: Scenario;
  /** Added to / overriding the registry (e.g. models with tiny context windows). */
  models?: readonly ModelSpec[];
  /** Default "none" so tests are fast. */
  latency?: "none" | "realistic" | LatencyModel;
  /** Scheduled or seeded-random faults. */
  faults?: FaultSpec;
  /** Default 0; the same request and seed give the same reply. */
  seed?: number;
  /** Milliseconds; default Date.now. Drives cache TTLs and rate-limit windows. */
  clock?: () => number;
  /**
   * Per API key, per sliding minute; each field overrides the default (DEFAULT_RATE_LIMITS, a
   * generous tier: the headers are on every response, the limits bite only when set lower).
   */
  rateLimits?: RateLimits;
  /**
   * Keep only the last N request records (default: all). Long runs of the embedded simulator
   * (the CLI's batch job) set it so raw bodies do not pile up in memory.
   */
  recordLimit?: number;
  /**
   * Message Batches processing (R-D4): `processingMs` of clock time until a batch's requests have
   * run (default 1000; 0 for fast tests), `expiresAfterMs` until unfinished requests expire
   * (default 24 h).
   */
  batches?: BatchOptions;
  /** Files API (R-D4): `storageLimitBytes` one API key may store (default 100 GB). */
  files?: FileOptions;
  /** Search results and pages web search and web fetch answer from (R-D4; else the scenario's `web`). */
  web?: WebFixtures;
}

export interface Simulator {
  /** "http://127.0.0.1:PORT": pass it as `baseURL` to the SDK. */
  readonly url: string;
  readonly port: number;
  /** One record per HTTP request, in arrival order. */
  requests(): readonly RequestRecord[];
  clearRequests(): void;
  setBrain(brain: Brain): void;
  setFaults(faults: FaultSpec): void;
  /** Closes the server and every open connection. */
  close(): Promise<void>;
}

export interface SimUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  /** Web searches and fetches this response ran (present when the request declares a web tool). */
  server_tool_use?: { web_search_requests: number; web_fetch_requests: number };
}

export interface RequestRecord {
  /** The `request-id` header value. */
  id: string;
  /** "/v1/messages" | "/v1/messages/count_tokens" | … (query string removed). */
  path: string;
  headers: Record<string, string>;
  /** Exact request bytes as text, so tests can compare fork prefixes byte by byte. */
  rawBody: string;
  model: string | null;
  stream: boolean;
  /** HTTP status sent (200 even if a mid-stream fault fired). */
  status: number;
  /** The `x-forkloop-query-source` request header, if any. */
  querySource: string | null;
  usage: SimUsage | null;
  /** The response's `context_management` when the request carried one (api doc §9). */
  contextManagement?: { applied_edits: AppliedEdit[] };
  /** By the model's prices: 5m write ×1.25, 1h write ×2, read ×0.1 of the input price. */
  costUsd: number;
  latencyMs: number;
  /** The fault fired: its kind ("429", "drop", "drip", "html_200", …), "max_tokens_cut" for max_tokens. */
  fault: string | null;
  /** The validation or other error returned. */
  error: { type: string; message: string } | null;
  /** Clock ms. */
  startedAt: number;
  firstByteAt: number | null;
  endedAt: number | null;
}

/** A brain decides the reply. It sees the parsed request and simple derived facts. */
export type Brain = (request: BrainRequest) => BrainReply | Promise<BrainReply>;

export interface BrainRequest {
  /** The parsed, validated request body. */
  body: MessagesRequest;
  /** Number of assistant messages in body.messages. */
  turnIndex: number;
  /** Text of the last user message (string content or its text blocks). */
  lastUserText: string | null;
  /** The tool results in the last user message. */
  lastToolResults: readonly { tool_use_id: string; content: string; is_error: boolean }[];
  /** Names of body.tools. */
  toolNames: readonly string[];
  /** The `x-forkloop-query-source` header. */
  querySource: string | null;
  /**
   * The key the request authenticated with (`x-api-key` or `Authorization: Bearer`): one
   * simulator can serve several clients each with its own script (the conformance harness).
   */
  apiKey: string;
  seed: number;
}

/**
 * `pause_turn`: the server paused a long-running server-tool turn; the client sends the reply
 * back as-is to continue it (validate-request.ts accepts that trailing assistant turn).
 */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "pause_turn";

export interface BrainReply {
  content: readonly ReplyBlock[];
  /** Default: tool_use if any tool_use block, else end_turn. */
  stop_reason?: StopReason | undefined;
  /**
   * Ask the simulator to inject this fault into the reply (scenario rules use it), by kind or with
   * its parameters (`{ kind: "drop", afterEvents: 3 }`): a brain can draw a fault per request.
   */
  fault?: FaultKind | FaultRequest;
  /**
   * Under adaptive thinking the model decides whether to think: `false` answers without the
   * thinking block the simulator adds when the reply has none (enabled thinking always thinks).
   */
  adaptiveThinking?: boolean;
  /**
   * With `stop_reason: "refusal"`: the policy category and explanation the response's
   * `stop_details` carries (both null when not given; handling stop reasons page).
   */
  refusal?:
    | { category?: RefusalCategory | null | undefined; explanation?: string | null | undefined }
    | undefined;
}

/** SDK 1.14's `RefusalStopDetails.category`. */
export type RefusalCategory = "cyber" | "bio" | "frontier_llm" | "reasoning_extraction" | "general_harms";

/** A refusal's `stop_details` (SDK 1.14's RefusalStopDetails); null for every other stop. */
export interface RefusalStopDetails {
  type: "refusal";
  category: RefusalCategory | null;
  explanation: string | null;
}

export type ReplyBlock =
  /** `citations` as the API returns them (web search result or document locations). */
  | { type: "text"; text: string; citations?: readonly Citation[] | undefined }
  /** `id` is generated ("toolu_…") when absent. */
  | { type: "tool_use"; name: string; input: Record<string, unknown>; id?: string | undefined }
  /** Only emitted when thinking is enabled; the simulator signs it. */
  | { type: "thinking"; thinking: string }
  /**
   * A server tool's call (e.g. web_search), run by the API, not the client: no tool_result is
   * owed. `id` is generated ("srvtoolu_…") when absent. The simulator runs web_search and
   * web_fetch when the request declares them (server-tools.ts); other server tools are not run.
   */
  | { type: "server_tool_use"; name: string; input: Record<string, unknown>; id?: string | undefined }
  /** A server tool's result, made by the simulator from the web fixtures (server-tools.ts). */
  | { type: ServerToolResultType; tool_use_id: string; content: unknown };

/** A citation on a response text block (citations page; web search page). */
export type Citation = { type: string; cited_text: string } & Record<string, unknown>;

/** The result blocks of the server tools the simulator answers (web search, web fetch, code execution). */
export type ServerToolResultType =
  | "web_search_tool_result"
  | "web_fetch_tool_result"
  | "code_execution_tool_result"
  | "bash_code_execution_tool_result"
  | "text_editor_code_execution_tool_result";
