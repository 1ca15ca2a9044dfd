import { randomUUID } from "node:crypto";
import type {
  AssistantMessage,
  LoopEvent,
  ModelInfo,
  SystemMessage,
  Terminal,
  Tool,
  UsageTotals,
  UserMessage,
} from "@forkloop/loop-core";
import { costUsd, getModelInfo, toolUseResultOf } from "@forkloop/loop-core";
import type { z } from "zod";
import {
  apiErrorLineFields,
  apiErrorResultFields,
  type EndingApiError,
  syntheticErrorMessage,
} from "./api-error-line.js";
import { lineUuid } from "./line-uuids.js";
import type {
  SDKCompactBoundaryMessage,
  SDKMessage,
  SDKResultMessage,
  SDKResultSuccess,
  SDKSystemMessage,
  SDKUserMessage,
} from "./messages.js";
import { PartialBlockLines } from "./partial-block-lines.js";
import type { apiErrorKindSchema, SubagentStats, SubagentUsage } from "./stream-json.js";
import { toolResultMetaEntry } from "./tool-result-meta.js";
import { toolUseMeta } from "./tool-use-meta.js";
import { FORKLOOP_VERSION } from "./version.js";

export interface PermissionDenialRecord {
  readonly tool_name: string;
  readonly tool_use_id: string;
  readonly tool_input: Record<string, unknown>;
}

type ModelUsage = SDKResultMessage["modelUsage"][string];

/** The counters of a model's usage (the rest describes the model). */
const COUNTERS = [
  "inputTokens",
  "outputTokens",
  "cacheReadInputTokens",
  "cacheCreationInputTokens",
  "webSearchRequests",
  "costUSD",
  "thinkingTokens",
  "cacheCreationEphemeral5mInputTokens",
  "cacheCreationEphemeral1hInputTokens",
] as const;

/** A dated model id's date: `-YYYYMMDD` at its end. */
const SNAPSHOT_DATE = /-\d{8}$/;

function emptyModelUsage(model: string, info: ModelInfo): ModelUsage {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    webSearchRequests: 0,
    costUSD: 0,
    contextWindow: info.contextWindow,
    maxOutputTokens: info.maxOutputTokens,
    thinkingTokens: 0,
    cacheCreationEphemeral5mInputTokens: 0,
    cacheCreationEphemeral1hInputTokens: 0,
    // Claude Code names the model without its snapshot date (claude-haiku-4-5-20251001 → claude-haiku-4-5).
    canonicalModel: model.replace(SNAPSHOT_DATE, ""),
    provider: "firstParty",
    costBasis: "list",
  };
}

/** Adds token counts and cost to a model's usage; forkloop's cache writes are all 5-minute ones (R-F3). */
function addUsage(
  usage: ModelUsage,
  add: {
    readonly inputTokens: number;
    readonly outputTokens: number;
    readonly cacheReadInputTokens: number;
    readonly cacheCreationInputTokens: number;
    readonly costUSD: number;
  },
): void {
  usage.inputTokens += add.inputTokens;
  usage.outputTokens += add.outputTokens;
  usage.cacheReadInputTokens += add.cacheReadInputTokens;
  usage.cacheCreationInputTokens += add.cacheCreationInputTokens;
  usage.cacheCreationEphemeral5mInputTokens += add.cacheCreationInputTokens;
  usage.costUSD += add.costUSD;
}

/** Each model's usage in `now` less what `before` had (a model with nothing new is left out). */
function usageSince(
  now: Record<string, ModelUsage>,
  before: Record<string, ModelUsage>,
): Record<string, ModelUsage> {
  const since: Record<string, ModelUsage> = {};
  for (const [model, usage] of Object.entries(now)) {
    const earlier = before[model];
    const delta = { ...usage };
    if (earlier !== undefined) for (const counter of COUNTERS) delta[counter] -= earlier[counter];
    if (COUNTERS.some((counter) => delta[counter] !== 0)) since[model] = delta;
  }
  return since;
}

/**
 * A result's `usage` as Claude Code prints it, from the four token counts and the web searches
 * the run paid for (R-T6: WebSearch's own requests, `server_tool_use.web_search_requests`).
 */
function resultUsage(
  usage: {
    readonly inputTokens: number;
    readonly outputTokens: number;
    readonly cacheCreationInputTokens: number;
    readonly cacheReadInputTokens: number;
  },
  webSearchRequests: number,
): SDKResultMessage["usage"] {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: usage.cacheCreationInputTokens,
    cache_read_input_tokens: usage.cacheReadInputTokens,
    // forkloop's cache_control breakpoints are all 5-minute ones (R-F3).
    cache_creation: {
      ephemeral_5m_input_tokens: usage.cacheCreationInputTokens,
      ephemeral_1h_input_tokens: 0,
    },
    server_tool_use: { web_search_requests: webSearchRequests, web_fetch_requests: 0 },
    service_tier: "standard",
    output_tokens_details: { thinking_tokens: 0 },
    inference_geo: "",
    iterations: [],
    speed: "standard",
    fallback_credit: null,
  };
}

/** Claude Code's name for a failed response, from its HTTP status (null: no response). */
function apiErrorKind(status: number | null): z.infer<typeof apiErrorKindSchema> {
  if (status === 401 || status === 403) return "authentication_failed";
  if (status === 402) return "billing_error";
  if (status === 429) return "rate_limit";
  if (status === 529) return "overloaded";
  if (status === 404) return "model_not_found";
  if (status === 400 || status === 413 || status === 422) return "invalid_request";
  if (status !== null && status >= 500) return "server_error";
  return "unknown";
}

/**
 * Turns the loop's events into Claude Code–compatible headless lines (stream-json.ts) and keeps
 * the run's accounting (cost per model from each response's usage, API time) for the `result`
 * line. Pure apart from the injected clock: tests feed it events and validate the lines.
 */
export class StreamJsonWriter {
  readonly #sessionId: string;
  readonly #includePartial: boolean;
  readonly #now: () => number;
  readonly #modelOverrides: readonly ModelInfo[];
  readonly #toolOrigin: (toolName: string) => Tool["mcpOrigin"];
  readonly #modelUsage: Record<string, ModelUsage> = {};
  /** The model the main loop's latest request named. */
  #requestModel: string | undefined;
  /** `modelUsage` as the previous result gave it, and how many results came before. */
  #modelUsageAtLastResult: Record<string, ModelUsage> = {};
  #results = 0;
  /** With partial messages: the API message ids whose streams began since the previous result. */
  #begunMessageIds: string[] = [];
  /** The API message being streamed (its message_start's id), for its stream events. */
  #apiMessageId: string | undefined;
  /** With partial messages: each block's line goes just before its content_block_stop (R-K2). */
  readonly #blockLines = new PartialBlockLines((block, uuid, envelope, requestId) =>
    this.#blockLine(envelope, block, uuid, { requestId }),
  );
  #requestStartedAt: number | undefined;
  /** The thinking display the latest request asked for (`summarized`, `omitted`, …), if any. */
  #thinkingDisplay: string | undefined;
  #apiMs = 0;
  #lastAssistant: AssistantMessage | undefined;
  /** This turn's time to first token, and the API error it ended on (with its message's text). */
  #turnStartedAt: number | undefined;
  #ttftMs: number | undefined;
  #endingApiError: { readonly error: EndingApiError; readonly text: string } | undefined;
  /** This turn's user lines, and its last user or assistant line (what an aborted turn's result describes). */
  #turnUserLines = 0;
  /**
   * This turn's tool results beyond the first of each reply's: Claude Code counts a user message
   * per tool result (parallel calls' results are separate messages, merged only in the request),
   * so a reply answered by N results counts N turns in num_turns. Results since the last reply.
   */
  #turnParallelResults = 0;
  #resultsSinceReply = 0;
  #turnLastMessage: SDKMessage | undefined;

  constructor(options: {
    sessionId: string;
    includePartialMessages?: boolean;
    now?: () => number;
    modelOverrides?: readonly ModelInfo[];
    /** An MCP tool's origin by the tool's name (its calls' `tool_use_meta`). */
    toolOrigin?: (toolName: string) => Tool["mcpOrigin"];
  }) {
    this.#sessionId = options.sessionId;
    this.#includePartial = options.includePartialMessages ?? false;
    this.#now = options.now ?? Date.now;
    this.#modelOverrides = options.modelOverrides ?? [];
    this.#toolOrigin = options.toolOrigin ?? (() => undefined);
  }

  #base() {
    return { session_id: this.#sessionId, uuid: randomUUID() };
  }

  init(info: {
    cwd: string;
    tools: readonly string[];
    model: string;
    permissionMode: string;
    simulated: boolean;
    /**
     * R-X2: where the key came from when not ANTHROPIC_API_KEY: the settings' apiKeyHelper, or
     * "none" for a gateway's ANTHROPIC_AUTH_TOKEN (a bearer token is not an API key, as Claude Code says).
     */
    apiKeySource?: "apiKeyHelper" | "none";
    mcpServers?: readonly { name: string; status: string }[];
    agents?: readonly string[];
    slashCommands?: readonly string[];
    skills?: readonly string[];
    additionalDirectories?: readonly string[];
    /** Whether Bash runs in the sandbox (R-S6). */
    sandboxEnabled?: boolean;
  }): SDKSystemMessage {
    return {
      type: "system",
      subtype: "init",
      ...this.#base(),
      cwd: info.cwd,
      tools: [...info.tools],
      model: info.model,
      permissionMode: info.permissionMode,
      apiKeySource: info.simulated ? "none" : (info.apiKeySource ?? "ANTHROPIC_API_KEY"),
      claude_code_version: FORKLOOP_VERSION,
      mcp_servers: (info.mcpServers ?? []).map((server) => ({ ...server })),
      slash_commands: [...(info.slashCommands ?? ["compact"])],
      output_style: "default",
      agents: [...(info.agents ?? [])],
      skills: [...(info.skills ?? [])],
      plugins: [],
      original_cwd: info.cwd,
      additional_directories: [...(info.additionalDirectories ?? [])],
      sandbox_enabled: info.sandboxEnabled ?? false,
      simulated: info.simulated,
    };
  }

  /** The lines one loop event becomes (often none: request_start, snapshots, summaries). */
  lines(event: LoopEvent): SDKMessage[] {
    switch (event.type) {
      case "assistant": {
        this.#countParallelResults();
        const lines = this.#assistant(event);
        return this.#counted(
          this.#includePartial && !event.apiError
            ? this.#blockLines.finished(event.message.id, lines)
            : [...this.#heldBack(), ...lines],
        );
      }
      case "user": {
        const lines = userLines(event, this.#sessionId, null);
        this.#resultsSinceReply += lines.filter((line) => {
          const content = line.message.content;
          return typeof content !== "string" && content[0]?.type === "tool_result";
        }).length;
        return this.#counted(lines);
      }
      case "system":
        return event.subtype === "compact_boundary" && event.compactMetadata
          ? [this.#boundaryLine(event, event.compactMetadata)]
          : [];
      case "stream_event":
        if (this.#ttftMs === undefined && this.#turnStartedAt !== undefined)
          this.#ttftMs = this.#now() - this.#turnStartedAt;
        if (!this.#includePartial) return [];
        if (event.event.type === "message_start") {
          this.#apiMessageId = event.event.message.id;
          this.#begunMessageIds.push(event.event.message.id);
        }
        return this.#counted(
          this.#blockLines.stream(
            event.event,
            {
              type: "stream_event",
              ...this.#base(),
              event: event.event as never,
              parent_tool_use_id: null,
              ...(this.#apiMessageId === undefined ? {} : { api_message_id: this.#apiMessageId }),
              ...(event.event.type === "message_start" && this.#requestStartedAt !== undefined
                ? { ttft_ms: this.#now() - this.#requestStartedAt }
                : {}),
              // The thinking display the request asked for, as Claude Code's message_start carries it.
              ...(event.event.type === "message_start" && this.#thinkingDisplay !== undefined
                ? { thinking_display: this.#thinkingDisplay }
                : {}),
            },
            event.requestId,
          ),
        );
      case "request_start":
        this.#requestStartedAt = this.#now();
        this.#requestModel = event.model;
        this.#turnStartedAt ??= this.#requestStartedAt;
        this.#thinkingDisplay = (event.prefix.thinking as { display?: string } | undefined)?.display;
        // With partial messages, each request is announced before its stream, as the Agent SDK does.
        return this.#includePartial
          ? [{ type: "system", subtype: "status", status: "requesting", ...this.#base() }]
          : [];
      case "api_retry":
        return [
          {
            type: "system",
            subtype: "api_retry",
            ...this.#base(),
            attempt: event.attempt,
            max_retries: event.maxRetries,
            retry_delay_ms: event.delayMs,
            error_status: event.status,
            error: apiErrorKind(event.status),
            error_message: event.error,
            ...(event.resumesAt === undefined ? {} : { resumes_at: new Date(event.resumesAt).toISOString() }),
          },
        ];
      case "model_fallback":
        return [
          { type: "system", subtype: "model_fallback", ...this.#base(), from: event.from, to: event.to },
        ];
      case "tombstone":
        return [{ type: "system", subtype: "tombstone", ...this.#base(), removed_uuid: event.uuid }];
      case "tool_use_summary":
      case "history_replaced":
      case "state_snapshot":
        return [];
      default: {
        const unreachable: never = event;
        throw new Error(`unknown loop event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * A `compact_boundary` line: its trigger, pre/post tokens and the session's running total of
   * dropped tokens; a manual compaction's also its duration and `logical_parent_uuid` (the last
   * message before it), as Claude Code's.
   */
  #boundaryLine(
    boundary: SystemMessage,
    metadata: NonNullable<SystemMessage["compactMetadata"]>,
    manual?: { readonly durationMs: number; readonly logicalParentUuid: string | undefined },
  ): SDKCompactBoundaryMessage {
    return {
      type: "system",
      subtype: "compact_boundary",
      session_id: this.#sessionId,
      uuid: boundary.uuid,
      compact_metadata: {
        trigger: metadata.trigger === "manual" ? "manual" : "auto",
        pre_tokens: metadata.preTokens,
        post_tokens: metadata.postTokens,
        ...(metadata.cumulativeDroppedTokens === undefined
          ? {}
          : { cumulative_dropped_tokens: metadata.cumulativeDroppedTokens }),
        ...(manual === undefined ? {} : { duration_ms: manual.durationMs }),
      },
      ...(manual?.logicalParentUuid === undefined ? {} : { logical_parent_uuid: manual.logicalParentUuid }),
    };
  }

  /**
   * Claude Code's `system/status` lines around a `/compact`: `compacting` as it starts (before
   * the PreCompact hooks), then null with whether it worked as it ends.
   */
  compactStatus(result?: "success" | "failed"): SDKMessage {
    return {
      type: "system",
      subtype: "status",
      ...this.#base(),
      status: result === undefined ? "compacting" : null,
      ...(result === undefined ? {} : { compact_result: result }),
    };
  }

  /**
   * The lines of a `/compact` that worked, after its turn's init, as Claude Code prints them: the
   * boundary, the summary message the history now starts with (a synthetic user line), and the
   * command's output as a replayed user line — `Compacted ` and what the PreCompact and
   * PostCompact hooks said, in `<local-command-stdout>` (R-K2, R-X1).
   */
  compactedLines(compacted: {
    readonly boundary: SystemMessage;
    readonly summary: UserMessage | undefined;
    readonly durationMs: number;
    readonly logicalParentUuid: string | undefined;
    readonly instructions: string;
    readonly hookDisplay: string;
  }): SDKMessage[] {
    const { boundary, summary } = compacted;
    const lines: SDKMessage[] = [];
    if (boundary.compactMetadata !== undefined)
      lines.push(this.#boundaryLine(boundary, boundary.compactMetadata, compacted));
    if (summary !== undefined) {
      const content = summary.message.content;
      lines.push({
        type: "user",
        session_id: this.#sessionId,
        uuid: summary.uuid,
        message: { role: "user", content: typeof content === "string" ? content : structuredClone(content) },
        parent_tool_use_id: null,
        timestamp: summary.timestamp,
        isReplay: false,
        isSynthetic: true,
      } as SDKMessage);
    }
    lines.push({
      type: "user",
      ...this.#base(),
      message: {
        role: "user",
        content: `<local-command-stdout>Compacted ${compacted.hookDisplay}</local-command-stdout>`,
      },
      parent_tool_use_id: null,
      timestamp: new Date(this.#now()).toISOString(),
      isReplay: true,
      local_command_run: { command: "compact", args: compacted.instructions },
    } as SDKMessage);
    return lines;
  }

  #countParallelResults(): void {
    this.#turnParallelResults += Math.max(0, this.#resultsSinceReply - 1);
    this.#resultsSinceReply = 0;
  }

  #counted(lines: SDKMessage[]): SDKMessage[] {
    for (const line of lines) if (line.type === "user") this.#turnUserLines++;
    // A stream event is never the turn's last message (the diagnostic names a message's kind).
    this.#turnLastMessage =
      lines.filter((line) => line.type !== "stream_event").at(-1) ?? this.#turnLastMessage;
    return lines;
  }

  #assistant(event: AssistantMessage): SDKMessage[] {
    if (this.#requestStartedAt !== undefined) {
      this.#apiMs += this.#now() - this.#requestStartedAt;
      this.#requestStartedAt = undefined;
    }
    const message = event.message;
    if (event.apiError) return [this.#apiErrorLine(event, event.apiError)];
    this.#endingApiError = undefined;
    this.#lastAssistant = event;
    // R-X2: keyed by the model the request named, as Claude Code keys it (the reply names the
    // dated id of an alias such as claude-haiku-4-5).
    const model = this.#requestModel ?? message.model;
    const info = getModelInfo(model, this.#modelOverrides);
    const usage = this.#modelUsage[model] ?? emptyModelUsage(model, info);
    this.#modelUsage[model] = usage;
    addUsage(usage, {
      inputTokens: message.usage.input_tokens,
      outputTokens: message.usage.output_tokens,
      cacheReadInputTokens: message.usage.cache_read_input_tokens ?? 0,
      cacheCreationInputTokens: message.usage.cache_creation_input_tokens ?? 0,
      costUSD: costUsd(info, message.usage),
    });
    // One line per content block, like Claude Code; the blocks of one reply share message.id,
    // each line has its own uuid (consumers key on it), the last one the message's.
    return message.content.map((block, index) =>
      this.#blockLine(message, block, lineUuid(event.uuid, message.id, index, message.content.length), event),
    );
  }

  /** One content block's assistant line; `event` has no timestamp for a block given as it streamed. */
  #blockLine(
    message: object,
    block: unknown,
    uuid: string,
    event: { readonly requestId?: string | undefined; readonly timestamp?: string },
  ): SDKMessage {
    const meta = toolUseMeta([block as never], this.#toolOrigin);
    return {
      type: "assistant" as const,
      session_id: this.#sessionId,
      uuid,
      message: oneBlockMessage(structuredClone(message), structuredClone(block)),
      parent_tool_use_id: null,
      ...(event.requestId === undefined ? {} : { request_id: event.requestId }),
      ...(meta === undefined ? {} : { tool_use_meta: meta }),
      timestamp: event.timestamp ?? new Date(this.#now()).toISOString(),
    };
  }

  /** A block held for its line, given before anything that is not its own message (R-K2). */
  #heldBack(): SDKMessage[] {
    return this.#includePartial ? this.#blockLines.flush() : [];
  }

  /**
   * R-K2: an API error's message as Claude Code's: a synthetic message holding the error's text,
   * and fields that say it is one, its kind, status and type (what `forkloop run` reads the
   * status from, as an error's result ends the turn).
   */
  #apiErrorLine(event: AssistantMessage, error: EndingApiError): SDKMessage {
    const text = event.message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
    this.#endingApiError = { error, text };
    return {
      type: "assistant",
      session_id: this.#sessionId,
      uuid: event.uuid,
      message: syntheticErrorMessage(text),
      parent_tool_use_id: null,
      ...(event.requestId === undefined ? {} : { request_id: event.requestId }),
      ...apiErrorLineFields(error),
      timestamp: event.timestamp,
    };
  }

  #diagnostic(): string {
    return diagnosticOf(this.#turnLastMessage, this.#lastAssistant?.message.stop_reason ?? null);
  }

  /** Final assistant text of the run (what `--output-format text` prints). */
  finalText(): string {
    const content = this.#lastAssistant?.message.content ?? [];
    return content
      .map((block) => (block.type === "text" ? block.text : ""))
      .join("")
      .trim();
  }

  /**
   * R-T6: a request a tool sent on its own (WebSearch's search): its tokens, searches and cost
   * count in modelUsage and the total, as Claude Code counts them; not in `usage` (the main loop's).
   */
  addSideUsage(model: string, usage: Parameters<typeof costUsd>[1]): void {
    const info = getModelInfo(model, this.#modelOverrides);
    const entry = this.#modelUsage[model] ?? emptyModelUsage(model, info);
    this.#modelUsage[model] = entry;
    addUsage(entry, {
      inputTokens: usage.input_tokens,
      outputTokens: usage.output_tokens,
      cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
      cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
      costUSD: costUsd(info, usage),
    });
    entry.webSearchRequests += usage.server_tool_use?.web_search_requests ?? 0;
  }

  totalCostUsd(): number {
    return Object.values(this.#modelUsage).reduce((sum, usage) => sum + usage.costUSD, 0);
  }

  /**
   * The `result` line of a `/compact` run: no model turn (num_turns 0); the usage and cost are
   * the compact request's. A compaction that worked is Claude Code's local command result (R-X1):
   * `result` empty, `local_command: "compact"`, the session's `subagent_stats`, and neither
   * `api_error_status` nor `terminal_reason`. A failed one is the same result with Claude Code's
   * `Error during compaction: <why>` as its text (not an error result: Claude Code 2.1.332 exits 0).
   */
  compactResult(
    outcome: {
      /** The failure's text (a compaction that worked says nothing). */
      readonly text: string;
      readonly usage: UsageTotals;
      readonly costUsd: number;
    },
    info: { durationMs: number; model: string; subagentStats: SubagentStats },
  ): SDKResultMessage {
    const { usage } = outcome;
    // The session's model has its entry even when no request of the compaction was answered (a
    // failed one), as Claude Code's local command result.
    const entry = emptyModelUsage(info.model, getModelInfo(info.model, this.#modelOverrides));
    if (usage.apiCalls > 0) addUsage(entry, { ...usage, costUSD: outcome.costUsd });
    const modelUsage: Record<string, ModelUsage> = { [info.model]: entry };
    const resultIndex = this.#results++;
    const common = {
      type: "result" as const,
      ...this.#base(),
      is_error: false,
      duration_ms: info.durationMs,
      duration_api_ms: 0,
      num_turns: 0,
      stop_reason: null,
      total_cost_usd: outcome.costUsd,
      usage: resultUsage(usage, 0),
      modelUsage,
      model_usage_since_last_result: structuredClone(modelUsage),
      result_index: resultIndex,
      permission_denials: [],
      subagent_stats: info.subagentStats,
      subagentUsage: [],
      cacheReadShare: cacheReadShare(Object.values(modelUsage)),
    };
    return { ...common, subtype: "success", result: outcome.text, local_command: "compact" };
  }

  /**
   * The `result` line after a turn. `usage` is this turn's main loop; `modelUsage` and
   * `total_cost_usd` are the session's so far, sub-agents merged in (as the Agent SDK), and
   * `subagentUsage` lists those sub-agents one by one, so usage + subagentUsage add up to them.
   */
  result(
    terminal: Terminal,
    info: {
      durationMs: number;
      permissionDenials: readonly PermissionDenialRecord[];
      /** Finished sub-agents of the session so far (running ones are listed with zeros). */
      subagents?: readonly SubagentUsage[];
      /** The session's Agent-tool sub-agents so far, counted (`subagent_stats`). */
      subagentStats?: SubagentStats;
      /** R-T5: background tasks' notices started the turn (not the caller's input). */
      fromTaskNotification?: boolean;
      /** The turn was stopped because the session's cost reached `maxBudgetUsd`. */
      overBudget?: boolean;
      /** The query's `maxTurns` and `maxBudgetUsd`, which their error results name. */
      maxTurns?: number;
      maxBudgetUsd?: number;
    },
  ): SDKResultMessage {
    // A hook's `continue: false` is a requested stop, not a failure: the Agent SDK (Claude Code)
    // reports success with an empty result and terminal_reason hook_stopped. A prompt a
    // UserPromptSubmit hook blocked is not a stop the user asked for: its reason is the result
    // (Claude Code shows a blocking hook's reason to the user).
    const hookStopped =
      terminal.reason === "hook_stopped" && terminal.error?.type !== "prompt_blocked" && !info.overBudget;
    const ok = terminal.reason === "completed" || hookStopped;
    const subtype = info.overBudget
      ? "error_max_budget_usd"
      : ok
        ? "success"
        : terminal.reason === "max_turns"
          ? "error_max_turns"
          : "error_during_execution";
    const resultText = info.overBudget
      ? `Reached maximum budget ($${info.maxBudgetUsd ?? "?"})`
      : hookStopped
        ? ""
        : terminal.reason === "completed"
          ? this.finalText()
          : terminal.reason === "max_turns"
            ? `Reached maximum number of turns (${info.maxTurns ?? terminal.turnCount - 1})`
            : (terminal.error?.message ?? this.#diagnostic());
    const subagents = info.subagents ?? [];
    const modelUsage = structuredClone(this.#modelUsage);
    for (const entry of subagents) {
      const usage =
        modelUsage[entry.model] ??
        emptyModelUsage(entry.model, getModelInfo(entry.model, this.#modelOverrides));
      modelUsage[entry.model] = usage;
      addUsage(usage, entry);
    }
    const sinceLastResult = usageSince(modelUsage, this.#modelUsageAtLastResult);
    this.#modelUsageAtLastResult = structuredClone(modelUsage);
    // R-K2: a turn that ended on an API error (a reply over the output cap too; a request too
    // large or an image refused, `image_error`) is, as Claude Code reports it, a success with
    // is_error whose result is the error message's text, and without a time to first token.
    const endedOnApiError = terminal.reason === "model_error" || terminal.reason === "image_error";
    const apiError = endedOnApiError && !info.overBudget ? this.#endingApiError : undefined;
    const turnTiming = this.#ttftMs === undefined || apiError ? {} : { ttft_ms: this.#ttftMs };
    this.#endingApiError = undefined;
    this.#turnStartedAt = undefined;
    this.#ttftMs = undefined;
    // Claude Code counts an ended turn's user messages (the prompt, each tool result, the
    // interrupt notice); forkloop's turnCount counts requests, the same for a turn that completes.
    const userMessages = 1 + this.#turnUserLines;
    this.#countParallelResults();
    const parallelResults = this.#turnParallelResults;
    this.#turnUserLines = 0;
    this.#turnParallelResults = 0;
    this.#turnLastMessage = undefined;
    // A budget stop comes as the reply is handed out, before its end (Claude Code: null).
    const stopReason = info.overBudget
      ? null
      : apiError
        ? "stop_sequence"
        : (this.#lastAssistant?.message.stop_reason ?? null);
    return resultOf(apiError ? "success" : subtype, apiError?.text ?? resultText, {
      type: "result",
      ...this.#base(),
      is_error: !ok,
      duration_ms: info.durationMs,
      duration_api_ms: this.#apiMs,
      // Claude Code counts the turn a hook's continue:false stopped (its tool results were in),
      // each parallel call's result as a turn of its own, and an aborted or failed turn's user messages (a reply cut at max_tokens: each resume).
      num_turns:
        (isAborted(terminal) && !info.overBudget) || apiError
          ? userMessages
          : terminal.turnCount + parallelResults + (hookStopped ? 1 : 0),
      result: apiError?.text ?? resultText,
      stop_reason: stopReason,
      total_cost_usd: Object.values(modelUsage).reduce((sum, usage) => sum + usage.costUSD, 0),
      usage: resultUsage(
        terminal.usage,
        Object.values(sinceLastResult).reduce((sum, usage) => sum + usage.webSearchRequests, 0),
      ),
      modelUsage,
      model_usage_since_last_result: sinceLastResult,
      result_index: this.#results++,
      ...(this.#includePartial ? { begun_message_ids: this.#begunMessageIds.splice(0) } : {}),
      ...(info.subagentStats === undefined ? {} : { subagent_stats: structuredClone(info.subagentStats) }),
      // As Claude Code's: what started a turn that no input started.
      ...(info.fromTaskNotification === true
        ? { origin: { kind: "task-notification", producer: "session-task", runId: randomUUID() } }
        : {}),
      api_error_status: null,
      ...(apiError ? apiErrorResultFields(apiError.error) : {}),
      ...turnTiming,
      permission_denials: [...info.permissionDenials],
      terminal_reason: info.overBudget
        ? "budget_exhausted"
        : apiError && terminal.reason === "model_error"
          ? "api_error"
          : terminal.reason,
      subagentUsage: subagents.map((entry) => ({ ...entry })),
      cacheReadShare: cacheReadShare(Object.values(modelUsage)),
    });
  }
}

/**
 * What Claude Code says of a turn that ended in error without an error of its own (a stop): the
 * kind of its last message, that message's last block kind, and the reply's stop reason.
 */
function diagnosticOf(last: SDKMessage | undefined, stopReason: string | null): string {
  const lastContentType =
    last?.type === "assistant" ? ((last.message.content.at(-1) as { type?: string })?.type ?? "none") : "n/a";
  return `[ede_diagnostic] result_type=${last?.type ?? "undefined"} last_content_type=${lastContentType} stop_reason=${stopReason}`;
}

function isAborted(terminal: Terminal): boolean {
  return terminal.reason === "aborted_streaming" || terminal.reason === "aborted_tools";
}

/**
 * A result of `subtype`, as the Agent SDK's: a success carries its `result` text, the API error
 * status and the time to the first token; an error result carries none of them and says what went
 * wrong in `errors`.
 */
function resultOf(
  subtype: SDKResultMessage["subtype"],
  errorText: string,
  fields: Omit<SDKResultSuccess, "subtype">,
): SDKResultMessage {
  if (subtype === "success") return { ...fields, subtype };
  const { result: _result, api_error_status: _status, ttft_ms: _ttft, ...common } = fields;
  return { ...common, subtype, errors: [errorText] };
}

/** Cache reads / (input + cache reads + cache writes) over some usage; 0 without input. */
export function cacheReadShare(
  usages: readonly {
    readonly inputTokens: number;
    readonly cacheReadInputTokens: number;
    readonly cacheCreationInputTokens: number;
  }[],
): number {
  let read = 0;
  let all = 0;
  for (const usage of usages) {
    read += usage.cacheReadInputTokens;
    all += usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
  }
  return all === 0 ? 0 : read / all;
}

/**
 * A user message as Claude Code prints it: content always as blocks (a string prompt or the
 * interrupt notice becomes one text block), and one line per tool_result, each with the tool's
 * output as `tool_use_result` — the sub-agent tracker prints a fork's the same way.
 */
function userLines(event: UserMessage, sessionId: string, parentToolUseId: string | null): SDKUserMessage[] {
  const content = event.message.content;
  const blocks = typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
  const results = blocks.filter((block) => block.type === "tool_result");
  const line = (part: readonly unknown[], toolUseResult?: unknown, uuid = event.uuid): SDKUserMessage => {
    const [result] = part as { type: string; tool_use_id?: string }[];
    // How the call's permission check ended (R-K2), on its own result's line.
    const meta =
      results.length === 1 && result?.type === "tool_result" && event.toolResultMeta !== undefined
        ? [toolResultMetaEntry(result.tool_use_id ?? "", event.toolResultMeta)]
        : undefined;
    return {
      type: "user",
      session_id: sessionId,
      uuid,
      message: { role: "user", content: structuredClone(part) as never },
      parent_tool_use_id: parentToolUseId,
      // A message the loop wrote, not the user (the resume request after a reply cut at max_tokens).
      ...(event.isMeta === true ? { isSynthetic: true } : {}),
      ...(toolUseResult === undefined ? {} : { tool_use_result: toolUseResult }),
      ...(meta === undefined ? {} : { tool_result_meta: meta }),
      timestamp: event.timestamp,
    };
  };
  if (results.length === 0) return [line(blocks)];
  // The message's own toolUseResult belongs to its one tool result; a message holding several
  // (answers the loop wrote for unanswered calls) gives each its text.
  const toolUseResult = (content: unknown): unknown =>
    results.length === 1 && event.toolUseResult !== undefined
      ? event.toolUseResult
      : toolUseResultOf({ content: content as string });
  return blocks.map((block, index) => {
    const uuid = lineUuid(event.uuid, event.uuid, index, blocks.length);
    return block.type === "tool_result"
      ? line([block], toolUseResult(block.content), uuid)
      : line([block], undefined, uuid);
  });
}

/**
 * An assistant line's message: the API message with one of its blocks, and its
 * `context_management` — null when the API sent none or its edits cleared nothing (every request
 * with thinking asks for edits that keep all thinking, R-X2), as Claude Code's lines carry it.
 */
export function oneBlockMessage(message: object, block: unknown): never {
  const { context_management } = message as { context_management?: { applied_edits?: unknown[] } | null };
  const applied = context_management?.applied_edits?.length ?? 0;
  return {
    ...message,
    content: [block],
    context_management: applied > 0 ? context_management : null,
  } as never;
}
