import type {
  AssistantMessage,
  LoopEvent,
  PreToolUseInput,
  Terminal,
  UserMessage,
} from "@forkloop/loop-core";
import { METRICS } from "./metric-names.js";
import { type Attributes, nowMs, OpenSpan, SPAN_KIND, type SpanRef, type TelemetrySink } from "./spans.js";
import { registerToolSpan } from "./state.js";

/**
 * R-V5: one agent's spans and metrics, made only from the loop's own events — the one place
 * that observes them (AgentRecorder.drive feeds it, on every host of the agent runner: the main
 * session, a worker thread's sub-agent or batch item). A turn (one drive of the loop) is an
 * `invoke_agent` span; each model request a `chat {model}` client span with its usage and cache
 * figures; each tool call an `execute_tool {name}` span, registered so a fork it starts (an
 * Agent call) is its child. Names and attributes are the GenAI semantic conventions'.
 */
export interface AgentIdentity {
  /** `main`, the Agent definition's name, or the fork's query source (`batch`, `compact` …). */
  readonly name: string;
  readonly id: string;
  readonly sessionId?: string;
}

const PROVIDER = { "gen_ai.provider.name": "anthropic" } as const;

interface OpenRequest {
  readonly span: OpenSpan;
  readonly startMs: number;
  readonly model: string;
  retries: number;
}

export class AgentTelemetry {
  readonly #sink: TelemetrySink;
  readonly #parent: SpanRef | undefined;
  readonly #agent: AgentIdentity;
  readonly #costOf: (message: AssistantMessage) => number;
  #turn: OpenSpan | undefined;
  #request: OpenRequest | undefined;
  readonly #tools = new Map<string, OpenSpan>();

  constructor(options: {
    readonly sink: TelemetrySink;
    readonly parent: SpanRef | undefined;
    readonly agent: AgentIdentity;
    readonly costOf: (message: AssistantMessage) => number;
  }) {
    this.#sink = options.sink;
    this.#parent = options.parent;
    this.#agent = options.agent;
    this.#costOf = options.costOf;
  }

  /** Opens the turn span; the loop's events that follow are its children. */
  beginTurn(model: string): void {
    this.#turn = new OpenSpan(this.#sink, `invoke_agent ${this.#agent.name}`, {
      parent: this.#parent,
      kind: SPAN_KIND.internal,
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        ...PROVIDER,
        "gen_ai.agent.name": this.#agent.name,
        "gen_ai.agent.id": this.#agent.id,
        ...(this.#agent.sessionId === undefined ? {} : { "gen_ai.conversation.id": this.#agent.sessionId }),
        "gen_ai.request.model": model,
      },
    });
  }

  observe(event: LoopEvent): void {
    switch (event.type) {
      case "request_start":
        // A request with no reply before the next one: its reply was withheld for a recovery (R-L9).
        this.#closeRequest({ "forkloop.request.outcome": "withheld" });
        this.#request = {
          span: new OpenSpan(this.#sink, `chat ${event.model}`, {
            parent: this.#turn ?? this.#parent,
            kind: SPAN_KIND.client,
            attributes: {
              "gen_ai.operation.name": "chat",
              ...PROVIDER,
              "gen_ai.request.model": event.model,
              "forkloop.query_source": event.querySource,
            },
          }),
          startMs: nowMs(),
          model: event.model,
          retries: 0,
        };
        return;
      case "api_retry":
        if (this.#request) this.#request.retries++;
        this.#metric(METRICS.retries.name, 1, { kind: "api", "error.type": event.error.slice(0, 60) });
        return;
      case "model_fallback":
        this.#closeRequest({ "forkloop.request.outcome": "fallback", "forkloop.fallback_model": event.to });
        return;
      case "assistant":
        this.#reply(event as AssistantMessage);
        return;
      case "user":
        this.#toolResults(event as UserMessage);
        return;
      default:
        return;
    }
  }

  /** Ends the turn: what is still open was cut off (an interrupt, a crash of the client). */
  endTurn(
    outcome: { readonly terminal: Terminal; readonly costUsd: number } | { readonly error: unknown },
  ): void {
    this.#closeRequest({ "forkloop.request.outcome": "aborted" });
    for (const [id, span] of this.#tools) {
      span.end({ error: "the turn ended before the tool returned" });
      registerToolSpan(id, undefined);
    }
    this.#tools.clear();
    const turn = this.#turn;
    this.#turn = undefined;
    if (!turn) return;
    if ("error" in outcome) {
      turn.end({ error: outcome.error instanceof Error ? outcome.error.message : String(outcome.error) });
      return;
    }
    const { terminal, costUsd } = outcome;
    const attributes: Attributes = {
      "forkloop.terminal_reason": terminal.reason,
      "forkloop.turns": terminal.turnCount,
      "forkloop.cost_usd": costUsd,
      "gen_ai.usage.input_tokens":
        terminal.usage.inputTokens +
        terminal.usage.cacheReadInputTokens +
        terminal.usage.cacheCreationInputTokens,
      "gen_ai.usage.output_tokens": terminal.usage.outputTokens,
      "gen_ai.usage.cache_read.input_tokens": terminal.usage.cacheReadInputTokens,
      "gen_ai.usage.cache_creation.input_tokens": terminal.usage.cacheCreationInputTokens,
    };
    turn.end(terminal.error === undefined ? "ok" : { error: terminal.error.message }, attributes);
  }

  #reply(message: AssistantMessage): void {
    const request = this.#request;
    this.#request = undefined;
    if (!message.apiError) this.#openTools(message);
    if (!request) return;
    const seconds = (nowMs() - request.startMs) / 1000;
    const model = message.message.model || request.model;
    const base = { "gen_ai.operation.name": "chat", ...PROVIDER, "gen_ai.request.model": request.model };
    if (message.apiError) {
      request.span.end(
        { error: message.apiError.message },
        { "error.type": message.apiError.type, "forkloop.retries": request.retries },
      );
      this.#metric(METRICS.operationDuration.name, seconds, { ...base, "error.type": message.apiError.type });
      return;
    }
    const usage = message.message.usage;
    const cacheRead = usage.cache_read_input_tokens ?? 0;
    const cacheCreation = usage.cache_creation_input_tokens ?? 0;
    // Semconv: gen_ai.usage.input_tokens includes the cached tokens (Anthropic's input_tokens does not).
    const input = usage.input_tokens + cacheRead + cacheCreation;
    const cost = this.#costOf(message);
    request.span.end("ok", {
      "gen_ai.response.model": model,
      ...(message.message.id ? { "gen_ai.response.id": message.message.id } : {}),
      ...(message.message.stop_reason
        ? { "gen_ai.response.finish_reasons": [message.message.stop_reason] }
        : {}),
      "gen_ai.usage.input_tokens": input,
      "gen_ai.usage.output_tokens": usage.output_tokens,
      "gen_ai.usage.cache_read.input_tokens": cacheRead,
      "gen_ai.usage.cache_creation.input_tokens": cacheCreation,
      "forkloop.cache.read_share": input === 0 ? 0 : cacheRead / input,
      "forkloop.cost_usd": cost,
      "forkloop.retries": request.retries,
    });
    const withModel = { ...base, "gen_ai.response.model": model };
    this.#metric(METRICS.operationDuration.name, seconds, withModel);
    this.#metric(METRICS.tokenHistogram.name, input, { ...withModel, "gen_ai.token.type": "input" });
    this.#metric(METRICS.tokenHistogram.name, usage.output_tokens, {
      ...withModel,
      "gen_ai.token.type": "output",
    });
    const byKind = { model, "forkloop.agent": this.#agent.name };
    this.#metric(METRICS.tokens.name, usage.input_tokens, { ...byKind, type: "input" });
    this.#metric(METRICS.tokens.name, usage.output_tokens, { ...byKind, type: "output" });
    this.#metric(METRICS.tokens.name, cacheRead, { ...byKind, type: "cacheRead" });
    this.#metric(METRICS.tokens.name, cacheCreation, { ...byKind, type: "cacheCreation" });
    this.#metric(METRICS.cost.name, cost, byKind);
    if (input > 0) this.#metric(METRICS.cacheReadShare.name, cacheRead / input, byKind);
  }

  /**
   * A PreToolUse hook with no opinion: the tool span starts as the call starts — with streaming
   * execution that is before the reply's message is yielded, and before a fork the call starts
   * looks for its parent span.
   */
  toolHook(): (input: PreToolUseInput) => Promise<Record<string, never>> {
    return async (input) => {
      this.#openTool(input.toolUseId, input.toolName);
      return {};
    };
  }

  /** Calls that never reach PreToolUse (an unknown tool, a denial) still get a span, from the reply. */
  #openTools(message: AssistantMessage): void {
    for (const block of message.message.content)
      if (block.type === "tool_use") this.#openTool(block.id, block.name);
  }

  #openTool(id: string, name: string): void {
    if (this.#tools.has(id)) return;
    const span = new OpenSpan(this.#sink, `execute_tool ${name}`, {
      parent: this.#turn ?? this.#parent,
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": id,
        "gen_ai.tool.type": "function",
      },
    });
    this.#tools.set(id, span);
    registerToolSpan(id, span);
  }

  #toolResults(message: UserMessage): void {
    const content = message.message.content;
    if (typeof content === "string") return;
    for (const block of content) {
      if (block.type !== "tool_result") continue;
      const span = this.#tools.get(block.tool_use_id);
      if (!span) continue;
      this.#tools.delete(block.tool_use_id);
      registerToolSpan(block.tool_use_id, undefined);
      span.end(block.is_error === true ? { error: "the tool returned an error" } : "ok");
    }
  }

  #closeRequest(attributes: Attributes): void {
    const request = this.#request;
    this.#request = undefined;
    request?.span.end(undefined, { ...attributes, "forkloop.retries": request.retries });
  }

  #metric(name: string, value: number, attributes: Attributes): void {
    this.#sink.metric({ name, value, attributes });
  }
}
