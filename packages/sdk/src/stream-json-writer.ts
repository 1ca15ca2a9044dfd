import { randomUUID } from "node:crypto";
import type { AssistantMessage, LoopEvent, ModelInfo, Terminal, UsageTotals } from "@forkloop/loop-core";
import { costUsd, getModelInfo } from "@forkloop/loop-core";
import type { SDKMessage, SDKResultMessage, SDKSystemMessage } from "./messages.js";
import type { SubagentUsage } from "./stream-json.js";

export interface PermissionDenialRecord {
  readonly tool_name: string;
  readonly tool_use_id: string;
  readonly tool_input: Record<string, unknown>;
}

interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  costUSD: number;
  contextWindow: number;
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
  readonly #modelUsage: Record<string, ModelUsage> = {};
  #requestStartedAt: number | undefined;
  #apiMs = 0;
  #lastAssistant: AssistantMessage | undefined;

  constructor(options: {
    sessionId: string;
    includePartialMessages?: boolean;
    now?: () => number;
    modelOverrides?: readonly ModelInfo[];
  }) {
    this.#sessionId = options.sessionId;
    this.#includePartial = options.includePartialMessages ?? false;
    this.#now = options.now ?? Date.now;
    this.#modelOverrides = options.modelOverrides ?? [];
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
    mcpServers?: readonly { name: string; status: string }[];
    agents?: readonly string[];
    slashCommands?: readonly string[];
  }): SDKSystemMessage {
    return {
      type: "system",
      subtype: "init",
      ...this.#base(),
      cwd: info.cwd,
      tools: [...info.tools],
      model: info.model,
      permissionMode: info.permissionMode,
      apiKeySource: info.simulated ? "none" : "ANTHROPIC_API_KEY",
      mcp_servers: (info.mcpServers ?? []).map((server) => ({ ...server })),
      slash_commands: [...(info.slashCommands ?? ["compact"])],
      output_style: "default",
      agents: [...(info.agents ?? [])],
      simulated: info.simulated,
    };
  }

  /** The lines one loop event becomes (often none: request_start, snapshots, summaries). */
  lines(event: LoopEvent): SDKMessage[] {
    switch (event.type) {
      case "assistant":
        return this.#assistant(event);
      case "user":
        return [
          {
            type: "user",
            session_id: this.#sessionId,
            uuid: event.uuid,
            message: { role: "user", content: structuredClone(event.message.content) as never },
            parent_tool_use_id: null,
          },
        ];
      case "system":
        if (event.subtype !== "compact_boundary" || !event.compactMetadata) return [];
        return [
          {
            type: "system",
            subtype: "compact_boundary",
            session_id: this.#sessionId,
            uuid: event.uuid,
            compact_metadata: {
              trigger: event.compactMetadata.trigger,
              pre_tokens: event.compactMetadata.preTokens,
              post_tokens: event.compactMetadata.postTokens,
            },
          },
        ];
      case "stream_event":
        return this.#includePartial
          ? [{ type: "stream_event", ...this.#base(), event: event.event as never, parent_tool_use_id: null }]
          : [];
      case "request_start":
        this.#requestStartedAt = this.#now();
        return [];
      case "api_retry":
        return [
          {
            type: "system",
            subtype: "api_retry",
            ...this.#base(),
            attempt: event.attempt,
            max_retries: event.maxRetries,
            retry_delay_ms: event.delayMs,
            error: event.error,
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

  #assistant(event: AssistantMessage): SDKMessage[] {
    if (this.#requestStartedAt !== undefined) {
      this.#apiMs += this.#now() - this.#requestStartedAt;
      this.#requestStartedAt = undefined;
    }
    const message = event.message;
    if (!event.apiError) {
      this.#lastAssistant = event;
      const info = getModelInfo(message.model, this.#modelOverrides);
      const usage = this.#modelUsage[message.model] ?? {
        inputTokens: 0,
        outputTokens: 0,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
        costUSD: 0,
        contextWindow: info.contextWindow,
      };
      this.#modelUsage[message.model] = usage;
      usage.inputTokens += message.usage.input_tokens;
      usage.outputTokens += message.usage.output_tokens;
      usage.cacheReadInputTokens += message.usage.cache_read_input_tokens ?? 0;
      usage.cacheCreationInputTokens += message.usage.cache_creation_input_tokens ?? 0;
      usage.costUSD += costUsd(info, message.usage);
    }
    // One line per content block, like Claude Code; the blocks of one reply share message.id.
    return message.content.map((block) => ({
      type: "assistant" as const,
      session_id: this.#sessionId,
      uuid: event.uuid,
      message: { ...structuredClone(message), content: [structuredClone(block)] } as never,
      parent_tool_use_id: null,
    }));
  }

  /** Final assistant text of the run (what `--output-format text` prints). */
  finalText(): string {
    const content = this.#lastAssistant?.message.content ?? [];
    return content
      .map((block) => (block.type === "text" ? block.text : ""))
      .join("")
      .trim();
  }

  totalCostUsd(): number {
    return Object.values(this.#modelUsage).reduce((sum, usage) => sum + usage.costUSD, 0);
  }

  /**
   * The `result` line of a `/compact` run: no model turn (num_turns 0); the usage and cost are
   * the compact request's; `result` says what happened (pre → post tokens, or the failure).
   */
  compactResult(
    outcome: {
      readonly ok: boolean;
      readonly text: string;
      readonly usage: UsageTotals;
      readonly costUsd: number;
    },
    info: { durationMs: number; model: string },
  ): SDKResultMessage {
    const { usage } = outcome;
    const modelUsage: Record<string, ModelUsage> = {};
    if (usage.apiCalls > 0) {
      modelUsage[info.model] = {
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        cacheReadInputTokens: usage.cacheReadInputTokens,
        cacheCreationInputTokens: usage.cacheCreationInputTokens,
        costUSD: outcome.costUsd,
        contextWindow: getModelInfo(info.model, this.#modelOverrides).contextWindow,
      };
    }
    return {
      type: "result",
      subtype: outcome.ok ? "success" : "error_during_execution",
      ...this.#base(),
      is_error: !outcome.ok,
      duration_ms: info.durationMs,
      duration_api_ms: 0,
      num_turns: 0,
      result: outcome.text,
      stop_reason: null,
      total_cost_usd: outcome.costUsd,
      usage: {
        input_tokens: usage.inputTokens,
        output_tokens: usage.outputTokens,
        cache_creation_input_tokens: usage.cacheCreationInputTokens,
        cache_read_input_tokens: usage.cacheReadInputTokens,
      },
      modelUsage,
      permission_denials: [],
      terminal_reason: outcome.ok ? "completed" : "compact_failed",
      errors: outcome.ok ? [] : [outcome.text],
      subagentUsage: [],
      cacheReadShare: cacheReadShare(Object.values(modelUsage)),
    };
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
      /** The turn was stopped because the session's cost reached `maxBudgetUsd`. */
      overBudget?: boolean;
    },
  ): SDKResultMessage {
    const subtype = info.overBudget
      ? "error_max_budget_usd"
      : terminal.reason === "completed"
        ? "success"
        : terminal.reason === "max_turns"
          ? "error_max_turns"
          : "error_during_execution";
    const resultText = info.overBudget
      ? "the session's cost reached maxBudgetUsd"
      : terminal.reason === "completed"
        ? this.finalText()
        : (terminal.error?.message ?? terminal.reason);
    const subagents = info.subagents ?? [];
    const modelUsage = structuredClone(this.#modelUsage);
    for (const entry of subagents) {
      const usage = modelUsage[entry.model] ?? {
        inputTokens: 0,
        outputTokens: 0,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
        costUSD: 0,
        contextWindow: getModelInfo(entry.model, this.#modelOverrides).contextWindow,
      };
      modelUsage[entry.model] = usage;
      usage.inputTokens += entry.inputTokens;
      usage.outputTokens += entry.outputTokens;
      usage.cacheReadInputTokens += entry.cacheReadInputTokens;
      usage.cacheCreationInputTokens += entry.cacheCreationInputTokens;
      usage.costUSD += entry.costUSD;
    }
    return {
      type: "result",
      subtype,
      ...this.#base(),
      is_error: terminal.reason !== "completed",
      duration_ms: info.durationMs,
      duration_api_ms: this.#apiMs,
      num_turns: terminal.turnCount,
      result: resultText,
      stop_reason: this.#lastAssistant?.message.stop_reason ?? null,
      total_cost_usd: Object.values(modelUsage).reduce((sum, usage) => sum + usage.costUSD, 0),
      usage: {
        input_tokens: terminal.usage.inputTokens,
        output_tokens: terminal.usage.outputTokens,
        cache_creation_input_tokens: terminal.usage.cacheCreationInputTokens,
        cache_read_input_tokens: terminal.usage.cacheReadInputTokens,
      },
      modelUsage,
      permission_denials: [...info.permissionDenials],
      terminal_reason: info.overBudget ? "max_budget_usd" : terminal.reason,
      errors: subtype === "success" ? [] : [resultText],
      subagentUsage: subagents.map((entry) => ({ ...entry })),
      cacheReadShare: cacheReadShare(Object.values(modelUsage)),
    };
  }
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
