import type {
  ApiMessage,
  CacheSafeParams,
  CanUseTool,
  ContentBlockParam,
  LoopHooks,
  Message,
  MessageParam,
  OutputConfig,
  RetryOptions,
  TerminalReason,
  ToolAnnotations,
  ToolResultMeta,
  UsageTotals,
} from "@forkloop/loop-core";
import { lazySchema, TERMINAL_REASONS } from "@forkloop/loop-core";
import type { BackgroundTaskEvent } from "@forkloop/tools";
import { z } from "zod";
import type { AgentSessionMemory } from "./agent-context.js";
import type { AgentProfile } from "./agent-profile.js";
import type { ApiKeyHelper } from "./api-key-helper.js";
import { wireErrorSchema } from "./errors.js";
import type { MetricPoint, SpanRecord } from "./telemetry/spans.js";

export type { PermissionRules, SubAgentBashOptions } from "./agent-profile.js";

/** Where a worker sends its requests; each worker builds its own SDK client from it. */
export interface ModelEndpoint {
  /** The API key, or with `auth: "bearer"` the bearer token. */
  readonly apiKey: string;
  /** R-X2: `x-api-key` (default, an API key) or `Authorization: Bearer` (`ANTHROPIC_AUTH_TOKEN`). */
  readonly auth?: "x-api-key" | "bearer" | "both";
  readonly baseURL?: string;
  /**
   * R-X3: API betas the user asked for (`--betas`, `ANTHROPIC_BETAS`), sent in `anthropic-beta` on
   * every request beside the betas forkloop's own features add.
   */
  readonly betas?: readonly string[];
  /** SDK retries per request (default: the SDK's 2). */
  readonly maxRetries?: number;
  /**
   * The model client's own retries and deadlines (R-R1, R-R2: a hung or silent server aborts the
   * attempt after `headersTimeoutMs` / `streamIdleTimeoutMs` and retries it); loop-core defaults.
   */
  readonly retry?: RetryOptions;
  /** R-X2: the settings' apiKeyHelper that printed `apiKey`: a 401 runs it again (api-key-helper.ts). */
  readonly keyHelper?: ApiKeyHelper;
}

/** One sub-agent to run in the pool (R-F2). Plain data: it is structured-cloned into a worker. */
export interface SubAgentTask {
  readonly id: string;
  readonly cwd: string;
  readonly workspaceRoots: readonly string[];
  /** R-F3: the parent's exact prefix; the fork's request starts byte-identical to the parent's. */
  readonly cacheSafeParams: CacheSafeParams;
  /** Appended after the parent's prefix (plain API messages or full history messages). */
  readonly promptMessages: readonly MessageParam[] | readonly Message[];
  /** `agent:<name>` | `compact` | `session_memory` | `skill:<name>` | `batch` … */
  readonly querySource: string;
  /** What the fork is for, in a few words (the Agent tool's `description` input). */
  readonly description?: string;
  /** The task as the tool call gave it (the Agent tool's `prompt` input), for the parent's view. */
  readonly prompt?: string;
  /** Tools of `cacheSafeParams.tools` this sub-agent may call (exact names); others are denied. */
  readonly toolNames: readonly string[];
  /**
   * The sub-agent's model settings, limits, permission mode and rules and Bash, whole: the
   * parent's (with the fork's model and turn limit), or a batch's. Its model is the prefix's.
   */
  readonly profile: AgentProfile;
  /**
   * The session's live mode (R-S14): when set, every permission check reads it at call time and
   * `profile.permissionMode` is only its value at fork time. Set for sub-agents that inherit the mode.
   */
  readonly permissionModeCell?: SharedArrayBuffer;
  /**
   * Annotations of parent-side tools that have them (MCP tools): the worker's proxy of each
   * answers isReadOnly/isConcurrencySafe from them, as the real tool does (R-M1).
   */
  readonly toolAnnotations?: Readonly<Record<string, ToolAnnotations>>;
  readonly transcriptPath?: string;
  /**
   * A top-level agent of a session of its own (a batch item, like one `claude -p` per item):
   * SessionStart (`startup`) and UserPromptSubmit fire for it before its first request, and a
   * blocked prompt ends it at once. Agent/Skill sub-agents leave it unset.
   */
  readonly startsSession?: boolean;
  /**
   * R-B6: structured outputs — every request carries `output_config.format`, so the sub-agent's
   * final reply is JSON for the schema (a batch's `--json-schema`). Not part of the cached prefix.
   */
  readonly outputFormat?: OutputConfig["format"];
  /** R-C5 session memory of this sub-agent (its own notes file); off when undefined. */
  readonly sessionMemory?: AgentSessionMemory;
  /**
   * R-R13: this task continues an interrupted sub-agent — `cacheSafeParams` is its own prefix
   * with its own history (read from `transcriptPath`), `promptMessages` the results that close its
   * open tool calls; it appends to that transcript and fires no session hooks.
   */
  readonly continues?: boolean;
  /**
   * R-V5: the W3C trace context of the span this sub-agent's spans hang from (the pool's fork
   * span once sent; before, what the caller wants the fork to be a child of: a batch item).
   * Set only when telemetry is on: a worker records spans only for a task that carries one.
   */
  readonly traceparent?: string;
  /**
   * R-T5: started by an Agent call with `run_in_background` — the call returned at once and the
   * parent is told when it ends (a task notification), so a turn's end does not wait for it.
   */
  readonly background?: boolean;
  /** Links the sub-agent's transcript to the session that forked it. */
  readonly parent?: { readonly sessionId: string; readonly agentId: string; readonly toolUseId?: string };
}

export interface TokenUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_creation_input_tokens: number;
  readonly cache_read_input_tokens: number;
}

/** Progress of a sub-agent, streamed from its worker by plain postMessage (structured clone). */
export type SubAgentEvent =
  | { readonly type: "started"; readonly agentId: string; readonly threadId: number; readonly at: number }
  | {
      readonly type: "request_start";
      readonly agentId: string;
      readonly model: string;
      readonly querySource: string;
      /** Epoch ms, on the pool's clock (the one `rate_limited.until` is on), when the worker sent the HTTP request. */
      readonly at: number;
    }
  | { readonly type: "text"; readonly agentId: string; readonly text: string }
  | {
      /**
       * A tool call's block is complete in the streamed reply (its content_block_stop): sent
       * before the reply ends and before the call's PreToolUse hook runs, once per block of an
       * attempt (a retried stream sends its blocks again). The parent announces the call then
       * (R-K2: the Agent SDK's task_progress).
       */
      readonly type: "tool_use_ready";
      readonly agentId: string;
      readonly toolUseId: string;
      readonly name: string;
      readonly input: unknown;
    }
  | {
      readonly type: "tool_use";
      readonly agentId: string;
      readonly toolUseId: string;
      readonly name: string;
      readonly input: unknown;
    }
  | {
      /**
       * A complete model reply (not an API error), as the API sent it, with its response's
       * request id: the parent yields its blocks as the sub-agent's assistant messages (R-K2).
       * Sent after the reply's `tool_use` events and before its `usage` end.
       */
      readonly type: "assistant_message";
      readonly agentId: string;
      readonly message: ApiMessage;
      readonly requestId?: string;
    }
  | {
      readonly type: "tool_result";
      readonly agentId: string;
      readonly toolUseId: string;
      readonly isError: boolean;
      /** The block said `is_error` outright, false included (a background start's answer, R-X1). */
      readonly errorStated?: true;
      readonly content: string;
      /** How the call's permission check ended, decided in the worker (R-K2, `tool_result_meta`). */
      readonly meta?: ToolResultMeta;
    }
  | {
      readonly type: "usage";
      readonly agentId: string;
      /** `start`: message_start (the response has begun, R-F4); `end`: the response is complete. */
      readonly phase: "start" | "end";
      readonly usage: TokenUsage;
    }
  | {
      readonly type: "api_retry";
      readonly agentId: string;
      readonly attempt: number;
      readonly maxRetries: number;
      readonly delayMs: number;
      readonly error: string;
      /** R-R11: a far rate-limit reset: the sub-agent waits until then (epoch ms), no attempt spent. */
      readonly resumesAt?: number;
    }
  | {
      readonly type: "rate_limited";
      readonly agentId: string;
      readonly retryAfterMs: number;
      readonly until: number;
    }
  | {
      readonly type: "compact_boundary";
      readonly agentId: string;
      readonly trigger: string;
      readonly preTokens: number;
      readonly postTokens: number;
    }
  | {
      /**
       * R-T4, R-X1: one of the sub-agent's own background commands started or ended (its worker's
       * BackgroundShells): the parent prints it as a task the sub-agent owns, as Claude Code does.
       */
      readonly type: "background_task";
      readonly agentId: string;
      readonly event: BackgroundTaskEvent;
    }
  | { readonly type: "done"; readonly agentId: string; readonly result: SubAgentResult }
  /** R-V5: finished spans and metric points for the parent's exporter (the pool keeps these). */
  | {
      readonly type: "telemetry";
      readonly agentId: string;
      readonly spans: readonly SpanRecord[];
      readonly metrics: readonly MetricPoint[];
    };

export type SubAgentStatus = "completed" | "failed" | "cancelled";

/** One compaction of a sub-agent's history (its `compact_boundary`): how much it shrank. */
export interface CompactionRecord {
  readonly trigger: "auto" | "manual" | "reactive";
  readonly preTokens: number;
  readonly postTokens: number;
}

export interface SubAgentResult {
  readonly agentId: string;
  readonly status: SubAgentStatus;
  readonly terminal?: TerminalReason;
  /** The final assistant text (what the parent's tool_result carries). */
  readonly text: string;
  readonly turns: number;
  /** Every API call of the sub-agent, its compact and session-memory requests included. */
  readonly usage: UsageTotals;
  readonly costUsd: number;
  /** Its compactions in order (R-C4); absent when none ran. */
  readonly compactions?: readonly CompactionRecord[];
  /** `status`: an API error's HTTP status (null: no response came); absent for other errors. */
  readonly error?: { readonly code: string; readonly message: string; readonly status?: number | null };
  readonly durationMs: number;
}

export const EMPTY_USAGE: UsageTotals = {
  inputTokens: 0,
  outputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
  apiCalls: 0,
};

const terminalReasonSchema = lazySchema(() =>
  z.enum(TERMINAL_REASONS as [TerminalReason, ...TerminalReason[]]),
);

/** Validates a result that crossed the worker boundary (STYLE.md §5). */
export const subAgentResultSchema = lazySchema(() =>
  z.object({
    agentId: z.string(),
    status: z.enum(["completed", "failed", "cancelled"]),
    terminal: terminalReasonSchema.optional(),
    text: z.string(),
    turns: z.number().int().nonnegative(),
    usage: z.object({
      inputTokens: z.number(),
      outputTokens: z.number(),
      cacheCreationInputTokens: z.number(),
      cacheReadInputTokens: z.number(),
      apiCalls: z.number(),
    }),
    costUsd: z.number(),
    compactions: z
      .array(
        z.object({
          trigger: z.enum(["auto", "manual", "reactive"]),
          preTokens: z.number(),
          postTokens: z.number(),
        }),
      )
      .optional(),
    error: wireErrorSchema
      .pick({ code: true, message: true })
      .extend({ status: z.number().int().nullable().optional() })
      .optional(),
    durationMs: z.number(),
  }),
);

/** A parent-side tool's answer: text, or blocks (images cross as they are, R-M1). */
export interface ParentToolResult {
  readonly content: string | readonly ContentBlockParam[];
  readonly isError: boolean;
}

/** What the worker accepts back from the parent (plain data across the thread, STYLE §5). */
export const parentToolResultSchema = lazySchema(() =>
  z.object({
    content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
    isError: z.boolean(),
  }),
);

/** Runs a parent-side tool (one the worker does not have: MCP tools, a nested `Agent`) for a sub-agent. */
export type ParentToolHandler = (
  toolName: string,
  input: Record<string, unknown>,
  options: { toolUseId: string; agentId: string },
) => Promise<ParentToolResult>;

/**
 * Calls the parent answers, exposed over comlink on the callbacks port. Any caller of
 * `pool.run`/`runAll` (a session's Agent tool, the CLI's batch) passes them per run.
 */
export interface ParentCallbacks {
  /** Asked when a permission rule says `ask` (R-P1); over comlink from the worker. */
  canUseTool?: CanUseTool;
  onEvent?: (event: SubAgentEvent) => void;
  /**
   * Loop hooks run in the parent for the sub-agent's loop, e.g. `createSettingsHooks(settings,
   * …)` from @forkloop/tools: PreToolUse can deny or rewrite a sub-agent's tool call, PostToolUse
   * adds feedback, and `stop` hooks run when the sub-agent stops. A stop hook sees the
   * sub-agent's id as `context.agentId` (never "main"), so settings hooks fire SubagentStop; a
   * blocking answer makes the sub-agent continue with the reason (R-L15).
   */
  hooks?: LoopHooks;
  /** Parent-side tools for this sub-agent; takes precedence over the pool's `parentTools`. */
  callTool?: ParentToolHandler;
  /**
   * A request gate (R-B1, `--rpm`): awaited in the parent before every HTTP request of
   * this sub-agent — its turns, SDK retries and compact forks alike — and resolves when the
   * request may go. `signal` aborts when the sub-agent is cancelled or finished; a gate then
   * returns without taking a slot.
   */
  requestSlot?: RequestGate;
  /**
   * R-B8: carries this sub-agent's model requests (`POST …/v1/messages`) instead of HTTP — the
   * Message Batches rounds of `forkloop batch --api batches`. The worker hands the body over and
   * builds the response from the answer; `signal` aborts when the request is abandoned.
   */
  modelTransport?: ModelTransport;
}

/** Resolves once a request may be sent (or `signal` aborted); rejects when it cannot tell. */
export type RequestGate = (signal: AbortSignal) => Promise<void>;

/** One model request carried by the parent (R-B8): the HTTP request as the SDK made it. */
export interface TransportedRequest {
  /** The sub-agent (a batch item's id) the request is from. */
  readonly agentId: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** The HTTP response the worker gives the SDK in its place. */
export interface TransportedResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export type ModelTransport = (
  request: TransportedRequest,
  signal: AbortSignal,
) => Promise<TransportedResponse>;

export interface SubAgentHandle {
  readonly id: string;
  readonly result: Promise<SubAgentResult>;
  /** Cooperative cancel over the control port; the thread is killed only after the grace period. */
  cancel(reason?: string): void;
  /** Queues a user message into the running loop. */
  steer(text: string): void;
}
